# rerankers/models/mxbai_v2.py:291 -- MxBaiV2Ranker's batch builder joins query and document ids
import warnings
warnings.simplefilter("ignore")
import rerankers.models.mxbai_v2  # the caller's module imports on both releases
from tok import tiny_tokenizer
tokenizer = tiny_tokenizer()
query_ids = tokenizer("query hello", return_tensors=None, add_special_tokens=False, max_length=12, truncation=True)["input_ids"]
doc_ids = tokenizer("doc world the", return_tensors=None, add_special_tokens=False, max_length=4, truncation=True)["input_ids"]
sep_ids = tokenizer("[SEP]", add_special_tokens=False)["input_ids"]
combined = tokenizer.prepare_for_model(query_ids, sep_ids + doc_ids, truncation="only_second", max_length=16,
    padding=False, return_attention_mask=False, return_token_type_ids=False, add_special_tokens=False)
print(combined["input_ids"])
