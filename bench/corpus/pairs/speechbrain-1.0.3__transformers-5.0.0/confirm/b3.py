import tempfile
from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import AutoTokenizer, PreTrainedTokenizerFast
WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "this", "is", "cool", "a", "test"]
_tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
_tok.pre_tokenizer = pre_tokenizers.Whitespace()
_tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
_dir = tempfile.mkdtemp()
PreTrainedTokenizerFast(tokenizer_object=_tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]").save_pretrained(_dir)

tokenizer = AutoTokenizer.from_pretrained(_dir)  # speechbrain/wordemb/transformer.py:292 (_get_tokenizer)
sentence = "this is cool"
encoded = tokenizer.encode_plus(sentence, return_tensors="pt")  # speechbrain/wordemb/transformer.py:191 (embeddings)
print(encoded.word_ids())
