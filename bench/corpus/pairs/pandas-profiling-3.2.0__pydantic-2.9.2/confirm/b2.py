# pandas-profiling 3.2.0: class Settings (pandas_profiling/config.py line 244) with its unannotated field at line 305
# (`notebook = Notebook()`). On pydantic 2 line 5 fails first (b1): BaseSettings is given back here as BaseModel
# (only where it is gone) so that the class statement runs.
import pydantic
if pydantic.VERSION.startswith("2"):
    pydantic.BaseSettings = pydantic.BaseModel
from _load import load_config
cfg = load_config()
print(cfg.Settings().notebook)
print("OK")
