# llm2vec/models/bidirectional_gemma.py:10 imports GemmaFlashAttention2 from transformers.models.gemma.modeling_gemma
# (the caller module itself cannot be imported alone: llm2vec/models/__init__.py imports every model file)
from transformers.models.gemma.modeling_gemma import GemmaFlashAttention2
print(GemmaFlashAttention2)
