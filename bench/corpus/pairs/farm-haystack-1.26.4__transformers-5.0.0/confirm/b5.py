import tempfile
from transformers import AutoTokenizer, BertTokenizer, PreTrainedTokenizerBase
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "b"]
_d = tempfile.mkdtemp()
with open(_d + "/vocab.txt", "w") as f:
    f.write("\n".join(VOCAB) + "\n")
BertTokenizer(vocab_file=_d + "/vocab.txt").save_pretrained(_d)

tokenizer = AutoTokenizer.from_pretrained(_d)  # SquadProcessor.tokenizer
question_input_ids, passage_input_ids = [5, 6], [7, 8, 9]
segment_ids = tokenizer.create_token_type_ids_from_sequences(  # haystack/modeling/data_handler/processor.py:744
    token_ids_0=question_input_ids, token_ids_1=passage_input_ids
)
print(segment_ids)
