from transformers.generation import GenerationMixin
from transformers.models.xmod.modeling_xmod import (
    XMOD_INPUTS_DOCSTRING,
    XMOD_START_DOCSTRING,
    XmodModel,
    XmodPreTrainedModel,
)  # adapters/models/xmod/adapter_model.py:6
from transformers.utils import add_start_docstrings, add_start_docstrings_to_model_forward
