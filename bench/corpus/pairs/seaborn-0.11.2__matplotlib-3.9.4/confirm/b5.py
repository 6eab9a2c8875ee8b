import matplotlib; matplotlib.use("Agg")
import matplotlib.cm as mcm
if not hasattr(mcm, "register_cmap"):
    # placeholder, so that seaborn imports past seaborn/cm.py line 1582 (b1) under the new release
    mcm.register_cmap = lambda *a, **k: None
import numpy as np, pandas as pd, seaborn as sns
rng = np.random.default_rng(0)
df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60), "h": rng.choice(["a", "b"], 60)})
# sns.PairGrid(df).map_diag(histplot) -> seaborn/axisgrid.py line 1444 (get_shared_y_axes().join)
g = sns.PairGrid(df[["x", "y"]]).map_diag(sns.histplot)
print(type(g).__name__)
print("OK")
