import tempfile
from transformers import AutoTokenizer, BertTokenizer, PreTrainedTokenizerBase
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "b"]
_d = tempfile.mkdtemp()
with open(_d + "/vocab.txt", "w") as f:
    f.write("\n".join(VOCAB) + "\n")
BertTokenizer(vocab_file=_d + "/vocab.txt").save_pretrained(_d)

tokenizer = AutoTokenizer.from_pretrained(_d)  # SquadProcessor.tokenizer
vec = tokenizer.build_inputs_with_special_tokens(token_ids_0=["a"], token_ids_1=["b"])  # processor.py:541
print(vec.index("a"), vec.index("b"))
