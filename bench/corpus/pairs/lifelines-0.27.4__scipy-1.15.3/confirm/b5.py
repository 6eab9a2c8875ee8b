import os, sys, types, importlib.util
# a bare parent package, so that the submodule below runs its own code without lifelines/__init__
# (which fails on its own under the new release: b1)
spec = importlib.util.find_spec("lifelines")
pkg = types.ModuleType("lifelines"); pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["lifelines"] = pkg
# lifelines/generate_datasets.py line 8 (from scipy.integrate import cumtrapz); cumulative_integral line 311
import numpy as np
import lifelines.generate_datasets as gd
print(gd.cumulative_integral(np.ones((5, 2)), np.arange(5.0)).shape)
print("OK")
