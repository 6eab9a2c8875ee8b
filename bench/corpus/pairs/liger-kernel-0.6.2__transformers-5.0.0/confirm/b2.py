from transformers.cache_utils import HybridCache  # liger_kernel/transformers/model/gemma3.py:9
