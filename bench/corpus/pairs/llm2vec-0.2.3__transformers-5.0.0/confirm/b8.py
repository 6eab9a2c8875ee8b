# llm2vec/models/bidirectional_qwen2.py:12 imports Qwen2SdpaAttention from transformers.models.qwen2.modeling_qwen2
from transformers.models.qwen2.modeling_qwen2 import Qwen2SdpaAttention
print(Qwen2SdpaAttention)
