# llm2vec/models/bidirectional_mistral.py:13 imports MistralFlashAttention2 from transformers.models.mistral.modeling_mistral
# (the caller module itself cannot be imported alone: llm2vec/models/__init__.py imports every model file)
from transformers.models.mistral.modeling_mistral import MistralFlashAttention2
print(MistralFlashAttention2)
