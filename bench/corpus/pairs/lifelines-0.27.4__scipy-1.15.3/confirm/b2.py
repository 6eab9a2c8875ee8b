import os, sys, types, importlib.util
# a bare parent package, so that the submodule below runs its own code without lifelines/__init__
# (which fails on its own under the new release: b1)
spec = importlib.util.find_spec("lifelines")
pkg = types.ModuleType("lifelines"); pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["lifelines"] = pkg
# lifelines/utils/__init__.py line 14 (from scipy.integrate import quad, trapz); then
# restricted_mean_survival_time (line 269) integrates with trapz
import lifelines.utils
print(lifelines.utils.qth_survival_time.__name__)
print("OK")
