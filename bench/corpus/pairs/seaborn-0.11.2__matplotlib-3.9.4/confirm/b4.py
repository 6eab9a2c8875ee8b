import matplotlib; matplotlib.use("Agg")
import matplotlib.cm as mcm
if not hasattr(mcm, "register_cmap"):
    # placeholder, so that seaborn imports past seaborn/cm.py line 1582 (b1) under the new release
    mcm.register_cmap = lambda *a, **k: None
import numpy as np, pandas as pd, seaborn as sns
rng = np.random.default_rng(0)
df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60), "h": rng.choice(["a", "b"], 60)})
# sns.PairGrid(df, hue=...).map_offdiag(sns.histplot) -> _map_bivariate -> Grid._update_legend_data:
# seaborn/axisgrid.py line 207 (ax.legend_.legendHandles)
g = sns.PairGrid(df, hue="h").map_offdiag(sns.histplot)
print(type(g).__name__)
print("OK")
