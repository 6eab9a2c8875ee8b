import json, os, tempfile
from transformers import AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
tokenizer = AutoTokenizer.from_pretrained(d)  # the caller loads its tokenizer with AutoTokenizer
e = tokenizer.encode_plus("hello world", "the a", max_length=8, padding="max_length", truncation=True)  # simpletransformers/classification/classification_utils.py:971
print(e)
