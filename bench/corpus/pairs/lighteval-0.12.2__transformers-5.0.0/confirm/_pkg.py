"""Load <pkg>.<mod> without running the package's __init__.py chain (it imports optional
dependencies this venv does not carry; the module used below needs none of them)."""

import importlib
import importlib.machinery
import sys
import types


def load(pkg, mod):
    parts = pkg.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0])
    path = next(iter(spec.submodule_search_locations))
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        if name in sys.modules:
            continue
        m = types.ModuleType(name)
        m.__path__ = [path + "/" + "/".join(parts[1 : i + 1])] if i else [path]
        sys.modules[name] = m
    return importlib.import_module(pkg + "." + mod)
