# scikitplot/plotters.py line 28 (from scipy import interp): the module imported under a bare parent package
# (scikitplot/__init__ fails first on metrics.py, b1); the control also runs plot_roc_curve (line 285)
import matplotlib; matplotlib.use("Agg")
import warnings; warnings.simplefilter("ignore")
import sys, types, importlib.util
spec = importlib.util.find_spec("scikitplot")
pkg = types.ModuleType("scikitplot"); pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["scikitplot"] = pkg
import numpy as np
from scikitplot import plotters
rng = np.random.default_rng(0)
y = rng.integers(0, 3, 60)
p = rng.dirichlet([1, 1, 1], 60)
print(type(plotters.plot_roc_curve(y, p)).__name__)
print("OK")
