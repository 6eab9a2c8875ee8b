import importlib

importlib.import_module("optimum.fx.optimization.transformations")
