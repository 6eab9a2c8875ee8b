# txtai/data/sequences.py:42 Sequences.process tokenizes targets inside
# self.tokenizer.as_target_tokenizer()
from _pkg import load
from _tiny import tiny_bert_dir
from transformers import AutoTokenizer

Sequences = load("txtai.data", "sequences").Sequences
tok = AutoTokenizer.from_pretrained(tiny_bert_dir())
seq = Sequences(tok, ("source", "target"), 16, None)
print(seq.process({"source": ["the cat sat", "a dog"], "target": ["on the mat", "sat"]}))
