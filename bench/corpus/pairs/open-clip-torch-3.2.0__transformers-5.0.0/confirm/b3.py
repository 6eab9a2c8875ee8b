# open_clip/tokenizer.py:594 SigLipTokenizer passes the .model path positionally to T5TokenizerFast
from _pkg import load
from _spm import local_spm_model

SigLipTokenizer = load("tokenizer").SigLipTokenizer
t = SigLipTokenizer(local_spm_model(), context_length=8)
print(t(["a photo of a cat"]))
