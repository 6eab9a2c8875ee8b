# flair/embeddings/transformer.py:232 _legacy_reconstruct_word_ids calls
# embedding.tokenizer.build_inputs_with_special_tokens
from _tiny import tiny_bert_dir
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained(tiny_bert_dir())
token_texts = tokenizer.tokenize(" ".join(["the", "cat"]))
token_ids = tokenizer.convert_tokens_to_ids(token_texts)
print(tokenizer.build_inputs_with_special_tokens(token_ids))
