import importlib

importlib.import_module("optimum.configuration_utils")
