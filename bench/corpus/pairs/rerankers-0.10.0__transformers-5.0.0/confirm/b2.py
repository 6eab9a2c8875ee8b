# rerankers/models/llm_layerwise_ranker.py:116 -- LLMLayerWiseRanker.tokenize builds each query/passage pair
import warnings
warnings.simplefilter("ignore")
import rerankers.models.llm_layerwise_ranker  # the caller's module imports on both releases
from tok import tiny_tokenizer
tokenizer = tiny_tokenizer()
max_sequence_length = 16
sep_inputs = tokenizer("\n", return_tensors=None, add_special_tokens=False)["input_ids"]
query_inputs = tokenizer("A: query", return_tensors=None, add_special_tokens=False, max_length=12, truncation=True)
passage_inputs = tokenizer("B: hello world", return_tensors=None, add_special_tokens=False, max_length=16, truncation=True)
item = tokenizer.prepare_for_model([tokenizer.cls_token_id] + query_inputs["input_ids"], sep_inputs + passage_inputs["input_ids"],
    truncation="only_second", max_length=max_sequence_length, padding=False, return_attention_mask=False,
    return_token_type_ids=False, add_special_tokens=False)
print(item["input_ids"])
