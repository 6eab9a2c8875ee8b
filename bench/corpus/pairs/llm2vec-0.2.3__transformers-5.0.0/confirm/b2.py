# llm2vec/models/bidirectional_llama.py:8 imports LlamaSdpaAttention from transformers.models.llama.modeling_llama
from transformers.models.llama.modeling_llama import LlamaSdpaAttention
print(LlamaSdpaAttention)
