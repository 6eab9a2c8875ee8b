# simpletransformers/language_modeling/language_modeling_model.py:109: the same import statement,
# this name alone
from transformers.data.datasets.language_modeling import LineByLineTextDataset

print(LineByLineTextDataset)
