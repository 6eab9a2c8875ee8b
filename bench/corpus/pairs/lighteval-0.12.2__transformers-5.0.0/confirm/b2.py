# lighteval/metrics/imports/summac.py:218 SummaCImager.build_image calls
# self.tokenizer.batch_encode_plus
from _pkg import load
from _tiny import tiny_bert_dir
from transformers import AutoTokenizer

load("lighteval.metrics.imports", "summac")
tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir())
batch_prems, batch_hypos = ["the cat sat"], ["a dog sat"]
batch_tokens = tokenizer.batch_encode_plus(
    list(zip(batch_prems, batch_hypos)),  # noqa: B905 (the line as lighteval writes it)
    padding=True,
    truncation=True,
    max_length=16,
    return_tensors="pt",
)
print(batch_tokens["input_ids"])
