import tempfile
import sentencepiece as spm
from transformers import T5Tokenizer

# a tiny local T5 sentencepiece tokenizer, loaded the way imagen_pytorch/t5.py:28 (get_tokenizer) does
d = tempfile.mkdtemp()
open(d + "/c.txt", "w").write("\n".join(["a photo of a cat", "a dog on the mat", "the quick brown fox jumps over the lazy dog"] * 50))
spm.SentencePieceTrainer.train(input=d + "/c.txt", model_prefix=d + "/spiece", vocab_size=30, model_type="unigram",
                               pad_id=0, eos_id=1, unk_id=2, bos_id=-1, minloglevel=2)
T5Tokenizer(vocab_file=d + "/spiece.model", extra_ids=0).save_pretrained(d)
MAX_LENGTH = 256
tokenizer = T5Tokenizer.from_pretrained(d, model_max_length=MAX_LENGTH)

texts = ["a photo of a cat", "a dog"]
encoded = tokenizer.batch_encode_plus(  # imagen_pytorch/t5.py:73 (t5_tokenize)
    texts,
    return_tensors = "pt",
    padding = 'longest',
    max_length = MAX_LENGTH,
    truncation = True
)
print(encoded.input_ids.shape, encoded.attention_mask.shape)
