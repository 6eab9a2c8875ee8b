# Helper for b1/b2 (not a break): run pandas_profiling/config.py as a module of its own -- the package __init__
# imports the whole profiler (visions, phik, ...), and config.py itself imports only enum, typing and pydantic.
import importlib.util, os, sys
def load_config():
    root = next(p for p in sys.path if os.path.exists(os.path.join(p, "pandas_profiling", "config.py")))
    path = os.path.join(root, "pandas_profiling", "config.py")
    spec = importlib.util.spec_from_file_location("pandas_profiling.config", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
