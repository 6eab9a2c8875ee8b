from transformers.generation import GenerationMixin
from transformers.models.bert.modeling_bert import (
    BERT_INPUTS_DOCSTRING,
    BERT_START_DOCSTRING,
    BertModel,
    BertPreTrainedModel,
)  # adapters/models/bert/adapter_model.py:2
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
