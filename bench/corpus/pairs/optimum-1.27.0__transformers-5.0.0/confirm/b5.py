import importlib

importlib.import_module("optimum.onnx.configuration")
