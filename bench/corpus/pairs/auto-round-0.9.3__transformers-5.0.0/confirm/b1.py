import importlib

importlib.import_module("auto_round.modelling.llama4")
