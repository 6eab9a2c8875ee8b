# spacy_transformers/layers/transformer_model.py:7 (the package imports data_classes first, which
# fails at its own line 5)
from transformers.tokenization_utils import BatchEncoding

print(BatchEncoding)
