# llm2vec/models/bidirectional_qwen2.py:11 imports Qwen2FlashAttention2 from transformers.models.qwen2.modeling_qwen2
# (the caller module itself cannot be imported alone: llm2vec/models/__init__.py imports every model file)
from transformers.models.qwen2.modeling_qwen2 import Qwen2FlashAttention2
print(Qwen2FlashAttention2)
