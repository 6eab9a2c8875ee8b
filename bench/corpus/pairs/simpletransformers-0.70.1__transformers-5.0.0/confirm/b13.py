import json, os, tempfile
from transformers import AutoTokenizer
d = tempfile.mkdtemp()
open(os.path.join(d, "vocab.txt"), "w").write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a"]) + "\n")
json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, open(os.path.join(d, "tokenizer_config.json"), "w"))
tokenizer = AutoTokenizer.from_pretrained(d)  # the caller loads its tokenizer with AutoTokenizer
ids = tokenizer.convert_tokens_to_ids(["hello", "world"])
print(tokenizer.build_inputs_with_special_tokens(ids))  # simpletransformers/language_modeling/language_modeling_utils.py:320
