# simpletransformers/question_answering/question_answering_utils.py:37: the same import
# statement, this name alone
from transformers.models.bert.tokenization_bert import whitespace_tokenize

print(whitespace_tokenize)
