import importlib

importlib.import_module("auto_round.modelling.gpt_oss")
