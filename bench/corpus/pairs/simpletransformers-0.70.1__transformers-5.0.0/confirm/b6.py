# simpletransformers/language_modeling/language_modeling_model.py:62: the same import statement,
# this name alone
from transformers import AutoModelWithLMHead

print(AutoModelWithLMHead)
