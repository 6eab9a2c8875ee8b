import json, os, tempfile
from transformers import AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
tokenizer = AutoTokenizer.from_pretrained(d)  # the caller loads its tokenizer with AutoTokenizer
with tokenizer.as_target_tokenizer():  # simpletransformers/t5/t5_utils.py:220
    labels = tokenizer(text=["hello world"], max_length=8, padding="max_length", truncation=True)
print(labels)
