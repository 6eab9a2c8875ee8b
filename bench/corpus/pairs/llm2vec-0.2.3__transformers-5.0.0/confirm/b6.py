# llm2vec/models/bidirectional_gemma.py:11 imports GemmaSdpaAttention from transformers.models.gemma.modeling_gemma
from transformers.models.gemma.modeling_gemma import GemmaSdpaAttention
print(GemmaSdpaAttention)
