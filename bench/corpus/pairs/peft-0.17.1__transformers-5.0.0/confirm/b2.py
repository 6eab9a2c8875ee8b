import torch
from transformers import DynamicCache
past_key_values = ((torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4)),)
past_key_values = DynamicCache.from_legacy_cache(past_key_values)  # peft/peft_model.py:778
