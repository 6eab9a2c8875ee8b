import torch
from transformers import IntervalStrategy
from transformers.integrations import get_available_reporting_integrations
from transformers.training_args import default_logdir  # setfit/training_args.py:13
from transformers.utils import is_torch_available
print(default_logdir())  # setfit/training_args.py:250
