import json, os, tempfile
from transformers import AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
tokenizer = AutoTokenizer.from_pretrained(d)  # the caller loads its tokenizer with AutoTokenizer

q = tokenizer.encode("hello world", add_special_tokens=False)
p = tokenizer.encode("the world", add_special_tokens=False)
item = tokenizer.prepare_for_model(q, p, truncation="only_second", max_length=16, padding=False)  # FlagEmbedding/inference/reranker/decoder_only/base.py:455
print(item)
