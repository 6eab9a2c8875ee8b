from transformers.generation import GenerationMixin
from transformers.models.electra.modeling_electra import (
    ELECTRA_INPUTS_DOCSTRING,
    ELECTRA_START_DOCSTRING,
    ElectraModel,
    ElectraPreTrainedModel,
)  # adapters/models/electra/adapter_model.py:2
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
