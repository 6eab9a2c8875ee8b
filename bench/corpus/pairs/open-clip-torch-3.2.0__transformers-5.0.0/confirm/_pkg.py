"""Load open_clip.<mod> without running open_clip/__init__.py: that file imports torchvision, whose
wheel here does not load on CPU torch 2.13 (the modules used below do not need it)."""

import importlib
import importlib.util
import sys
import types


def load(mod):
    spec = importlib.util.find_spec("open_clip")
    pkg = types.ModuleType("open_clip")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["open_clip"] = pkg
    return importlib.import_module("open_clip." + mod)
