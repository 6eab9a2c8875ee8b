import matplotlib; matplotlib.use("Agg")
import matplotlib.cm as mcm
if not hasattr(mcm, "register_cmap"):
    # placeholder, so that seaborn imports past seaborn/cm.py line 1582 (b1) under the new release
    mcm.register_cmap = lambda *a, **k: None
import numpy as np, pandas as pd, seaborn as sns
rng = np.random.default_rng(0)
df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60), "h": rng.choice(["a", "b"], 60)})
# sns.move_legend(scatterplot with hue, "upper left") -> seaborn/utils.py line 387 (old_legend.legendHandles)
ax = sns.scatterplot(data=df, x="x", y="y", hue="h")
sns.move_legend(ax, "upper left")
print("OK")
