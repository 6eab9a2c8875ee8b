from transformers.generation import GenerationMixin
from transformers.models.roberta.modeling_roberta import (
    ROBERTA_INPUTS_DOCSTRING,
    ROBERTA_START_DOCSTRING,
    RobertaModel,
    RobertaPreTrainedModel,
)  # adapters/models/roberta/adapter_model.py:2
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
