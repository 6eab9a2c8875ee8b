# scikit-plot 0.3.7: import scikitplot -> scikitplot/metrics.py line 27 (from scipy import interp);
# the control also draws plot_roc with macro averaging (line 284 calls interp)
import matplotlib; matplotlib.use("Agg")
import warnings; warnings.simplefilter("ignore")
import numpy as np
import scikitplot as skplt
rng = np.random.default_rng(0)
y = rng.integers(0, 3, 60)
p = rng.dirichlet([1, 1, 1], 60)
ax = skplt.metrics.plot_roc(y, p)
print(type(ax).__name__)
print("OK")
