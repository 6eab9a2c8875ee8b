"""A tiny GPT-2 (random weights) and a word-level tokenizer, built locally (no hub)."""

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

WORDS = ["<pad>", "<unk>", "<eos>", "the", "cat", "sat", "on", "mat", "a", "dog"]


def tiny_gpt2():
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        unk_token="<unk>",
        eos_token="<eos>",
        bos_token="<eos>",
    )
    cfg = GPT2Config(
        vocab_size=len(WORDS),
        n_positions=32,
        n_embd=16,
        n_layer=1,
        n_head=2,
        bos_token_id=2,
        eos_token_id=2,
        pad_token_id=0,
    )
    return GPT2LMHeadModel(cfg).eval(), fast
