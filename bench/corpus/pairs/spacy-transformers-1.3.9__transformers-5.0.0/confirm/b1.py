from transformers.tokenization_utils import BatchEncoding  # spacy_transformers/data_classes.py:5
from transformers.file_utils import ModelOutput
from transformers.modeling_outputs import BaseModelOutput
