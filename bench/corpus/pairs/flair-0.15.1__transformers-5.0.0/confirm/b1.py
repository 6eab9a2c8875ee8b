import importlib

importlib.import_module("flair.embeddings.transformer")
