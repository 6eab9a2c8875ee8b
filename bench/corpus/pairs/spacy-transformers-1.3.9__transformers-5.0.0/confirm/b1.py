import importlib

importlib.import_module("spacy_transformers.data_classes")
