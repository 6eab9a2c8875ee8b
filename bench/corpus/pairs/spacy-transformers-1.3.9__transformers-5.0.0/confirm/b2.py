# spacy_transformers/util.py:5 (the module imports data_classes first, which fails at its own
# line 5)
from transformers.tokenization_utils import BatchEncoding

print(BatchEncoding)
