import torch
from transformers import EncoderDecoderCache
t = torch.zeros(1, 2, 3, 4)
past_key_values = ((t, t, t, t),)
past_key_values = EncoderDecoderCache.from_legacy_cache(past_key_values)  # peft/peft_model.py:785
