import tempfile
from transformers import AutoTokenizer, BertTokenizer, PreTrainedTokenizerBase
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "b"]
_d = tempfile.mkdtemp()
with open(_d + "/vocab.txt", "w") as f:
    f.write("\n".join(VOCAB) + "\n")
BertTokenizer(vocab_file=_d + "/vocab.txt").save_pretrained(_d)

tokenizer = AutoTokenizer.from_pretrained(_d)  # haystack/nodes/preprocessor/preprocessor.py:882
text = "the cat sat on the mat"
if isinstance(tokenizer, PreTrainedTokenizerBase):
    encoded = tokenizer.encode_plus(text, return_offsets_mapping=True, add_special_tokens=False)  # preprocessor.py:889
    print(encoded.offset_mapping)
