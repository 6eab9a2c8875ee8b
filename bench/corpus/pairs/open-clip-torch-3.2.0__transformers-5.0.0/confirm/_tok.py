"""A tiny word-level tokenizer saved locally (no hub), loadable with AutoTokenizer."""

import tempfile

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast


def local_tokenizer_dir():
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "photo", "of", "cat", "dog"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        bos_token="[CLS]",
        eos_token="[SEP]",
    )
    d = tempfile.mkdtemp()
    fast.save_pretrained(d)
    return d
