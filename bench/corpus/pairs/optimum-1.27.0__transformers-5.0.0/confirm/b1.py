import importlib

importlib.import_module("optimum.commands.env")
