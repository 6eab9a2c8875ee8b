from transformers.generation import GenerationMixin
from transformers.models.distilbert.modeling_distilbert import (
    DISTILBERT_INPUTS_DOCSTRING,
    DISTILBERT_START_DOCSTRING,
    DistilBertModel,
    DistilBertPreTrainedModel,
)  # adapters/models/distilbert/adapter_model.py:4
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
