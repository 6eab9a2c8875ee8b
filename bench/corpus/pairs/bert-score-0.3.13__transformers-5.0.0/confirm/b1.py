# bert_score/utils.py:192 sent_encode("") calls tokenizer.build_inputs_with_special_tokens([])
import bert_score
from _tiny import tiny_bert_dir
from bert_score.utils import get_tokenizer, sent_encode

d = tiny_bert_dir()
P, R, F = bert_score.score(
    ["the cat sat on the mat"], ["a dog sat on the mat"], model_type=d, num_layers=1
)
print("non-empty ok", F)
print("empty", sent_encode(get_tokenizer(d, use_fast=True), ""))
