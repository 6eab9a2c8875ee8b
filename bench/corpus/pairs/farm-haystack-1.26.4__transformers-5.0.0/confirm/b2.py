import tempfile
from transformers import AutoTokenizer, BertTokenizer, PreTrainedTokenizerBase
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "b"]
_d = tempfile.mkdtemp()
with open(_d + "/vocab.txt", "w") as f:
    f.write("\n".join(VOCAB) + "\n")
BertTokenizer(vocab_file=_d + "/vocab.txt").save_pretrained(_d)

tokenizer = AutoTokenizer.from_pretrained(_d)  # a FARM tokenizer (get_tokenizer / AutoTokenizer)
seq_a, seq_b, max_seq_len, stride = [5, 6, 7, 8, 5, 9], [6, 7], 6, 0
total_len = len(seq_a) + len(seq_b) + tokenizer.num_special_tokens_to_add(pair=True)  # feature_extraction.py:268-269
seq_a, seq_b, overflowing_tokens = tokenizer.truncate_sequences(  # haystack/modeling/model/feature_extraction.py:273
    seq_a,
    pair_ids=seq_b,
    num_tokens_to_remove=total_len - max_seq_len,
    truncation_strategy="longest_first",
    stride=stride,
)
print(seq_a, seq_b, overflowing_tokens)
