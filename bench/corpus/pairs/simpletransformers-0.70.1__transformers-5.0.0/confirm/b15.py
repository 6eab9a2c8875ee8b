from transformers.models.bert.tokenization_bert import (
    BasicTokenizer,
    whitespace_tokenize,
)  # simpletransformers/question_answering/question_answering_utils.py:37-40
