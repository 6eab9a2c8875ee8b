# pandas-profiling 3.2.0: pandas_profiling/config.py line 5 (from pydantic import BaseModel, BaseSettings, Field)
from _load import load_config
cfg = load_config()
print(cfg.Settings().title)
print("OK")
