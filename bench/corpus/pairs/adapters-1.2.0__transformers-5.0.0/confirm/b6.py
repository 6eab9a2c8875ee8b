from transformers.generation import GenerationMixin
from transformers.models.xlm_roberta.modeling_xlm_roberta import (
    XLM_ROBERTA_INPUTS_DOCSTRING,
    XLM_ROBERTA_START_DOCSTRING,
    XLMRobertaModel,
    XLMRobertaPreTrainedModel,
)  # adapters/models/xlm_roberta/adapter_model.py:2
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
