# llm2vec/models/bidirectional_mistral.py:14 imports MistralSdpaAttention from transformers.models.mistral.modeling_mistral
from transformers.models.mistral.modeling_mistral import MistralSdpaAttention
print(MistralSdpaAttention)
