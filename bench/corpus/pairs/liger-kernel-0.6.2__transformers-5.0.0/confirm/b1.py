from transformers.cache_utils import HybridCache  # liger_kernel/transformers/model/gemma2.py:10
from transformers.modeling_outputs import CausalLMOutputWithPast
from transformers.utils.deprecation import deprecate_kwarg
