from transformers.generation import GenerationMixin
from transformers.models.bert_generation.modeling_bert_generation import (
    BERT_GENERATION_INPUTS_DOCSTRING,
    BERT_GENERATION_START_DOCSTRING,
    BertGenerationEncoder,
    BertGenerationPreTrainedModel,
)  # adapters/models/bert_generation/adapter_model.py:2
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
