import json, os, tempfile
from transformers import AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
tokenizer = AutoTokenizer.from_pretrained(d, use_fast=False)  # as tevatron/driver/train.py:67-71 loads it
ids = tokenizer.convert_tokens_to_ids(["hello", "world"])
item = tokenizer.encode_plus(ids, max_length=8, truncation="only_first", padding=False, return_attention_mask=False, return_token_type_ids=False)  # tevatron/data.py:98
print(item)
