# lighteval/metrics/imports/bert_scorer.py:55 sent_encode("") calls
# tokenizer.build_inputs_with_special_tokens([])
from _pkg import load
from _tiny import tiny_bert_dir
from transformers import AutoTokenizer

m = load("lighteval.metrics.imports", "bert_scorer")
tok = AutoTokenizer.from_pretrained(tiny_bert_dir())
print(m.sent_encode(tok, "the cat"))
print(m.sent_encode(tok, ""))
