from transformers.models.albert.modeling_albert import (
    ALBERT_INPUTS_DOCSTRING,
    ALBERT_START_DOCSTRING,
    AlbertModel,
    AlbertPreTrainedModel,
)  # adapters/models/albert/adapter_model.py:1
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
