from transformers import AutoModel, AutoTokenizer
from transformers.tokenization_utils import BatchEncoding  # spacy_transformers/util.py:5
from transformers.tokenization_utils_fast import PreTrainedTokenizerFast
