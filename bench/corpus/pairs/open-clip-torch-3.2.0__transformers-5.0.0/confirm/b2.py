# open_clip/tokenizer.py:510 HFTokenizer._clips_tokenize calls self.tokenizer.batch_encode_plus
from _pkg import load
from _tok import local_tokenizer_dir

HFTokenizer = load("tokenizer").HFTokenizer
t = HFTokenizer(local_tokenizer_dir(), context_length=8, tokenizer_mode="clips")
print(t(["a photo of a dog"]))
