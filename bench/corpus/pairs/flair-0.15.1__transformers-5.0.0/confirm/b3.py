# flair/embeddings/transformer.py:1223-1225 TransformerEmbeddings.__init__ (use_context_separator)
# calls self.tokenizer.add_special_tokens(..., replace_additional_special_tokens=False)
from _tiny import tiny_bert_dir
from transformers import AutoTokenizer

SENTENCE_BOUNDARY_TAG = "[FLERT]"  # flair.embeddings.transformer.SENTENCE_BOUNDARY_TAG
tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir())
added = tokenizer.add_special_tokens(
    {"additional_special_tokens": [SENTENCE_BOUNDARY_TAG]}, replace_additional_special_tokens=False
)
print(added)
