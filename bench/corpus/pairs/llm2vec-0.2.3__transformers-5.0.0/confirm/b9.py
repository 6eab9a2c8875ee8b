# llm2vec/models/bidirectional_mistral.py:19
from transformers.cache_utils import Cache, StaticCache, SlidingWindowCache
print(SlidingWindowCache)
