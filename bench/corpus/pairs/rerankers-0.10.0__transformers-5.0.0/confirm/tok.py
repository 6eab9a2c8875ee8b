"""A tiny local tokenizer loaded the way the caller loads its own (AutoTokenizer.from_pretrained)."""
import json, os, tempfile
from transformers import AutoTokenizer
def tiny_tokenizer():
    d = tempfile.mkdtemp()
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "query", "doc", "hello", "world", "the"]
    open(os.path.join(d, "vocab.txt"), "w").write("\n".join(words) + "\n")
    json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
    return AutoTokenizer.from_pretrained(d)
