# simpletransformers/language_generation/language_generation_model.py:9: the same import
# statement, this name alone
from transformers import TransfoXLLMHeadModel

print(TransfoXLLMHeadModel)
