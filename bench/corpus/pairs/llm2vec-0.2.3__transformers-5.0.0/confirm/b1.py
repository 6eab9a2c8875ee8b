# llm2vec/models/bidirectional_llama.py:7 imports LlamaFlashAttention2 from transformers.models.llama.modeling_llama
# (the caller module itself cannot be imported alone: llm2vec/models/__init__.py imports every model file)
from transformers.models.llama.modeling_llama import LlamaFlashAttention2
print(LlamaFlashAttention2)
