"""A tiny sentencepiece model trained here (no download)."""

import os
import tempfile

import sentencepiece as spm


def local_spm_model():
    d = tempfile.mkdtemp()
    corpus = os.path.join(d, "corpus.txt")
    with open(corpus, "w") as f:
        f.write("\n".join(["a photo of a cat", "a photo of a dog", "the quick brown fox"] * 50))
    spm.SentencePieceTrainer.train(
        input=corpus,
        model_prefix=os.path.join(d, "tiny"),
        vocab_size=40,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    return os.path.join(d, "tiny.model")
