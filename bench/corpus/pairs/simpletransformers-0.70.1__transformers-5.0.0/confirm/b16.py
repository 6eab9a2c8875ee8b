from transformers import TransfoXLConfig, TransfoXLLMHeadModel, TransfoXLTokenizer  # language_generation_model.py:9-28 (names at 19-21)
