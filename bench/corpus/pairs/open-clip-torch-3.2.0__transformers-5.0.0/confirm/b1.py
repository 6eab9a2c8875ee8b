# open_clip/tokenizer.py:484 HFTokenizer.__call__ calls self.tokenizer.batch_encode_plus
from _pkg import load
from _tok import local_tokenizer_dir

HFTokenizer = load("tokenizer").HFTokenizer
t = HFTokenizer(local_tokenizer_dir(), context_length=8)
print(t(["a photo of a cat"]))
