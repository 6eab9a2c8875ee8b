# llm2vec/models/bidirectional_llama.py:130, in the BiModel's _update_causal_mask when the cache is a StaticCache:
#     target_length = past_key_values.get_max_length()
# run with the same receiver type: a StaticCache built for a tiny LlamaConfig
import warnings
warnings.simplefilter("ignore")
import torch
from transformers import LlamaConfig
from transformers.cache_utils import StaticCache
cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2, head_dim=8)
past_key_values = StaticCache(config=cfg, max_batch_size=1, max_cache_len=8, device="cpu", dtype=torch.float32)
target_length = past_key_values.get_max_length()
print("target_length", target_length)
