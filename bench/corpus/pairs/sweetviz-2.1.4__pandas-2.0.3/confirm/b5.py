import numpy as np, pandas as pd
rng = np.random.default_rng(0)
# series_analyzer_cat.py line 28: `for item in category_counts.iteritems():` run as written on the
# value-counts Series it receives (the analyze() path fails earlier under the new release, b1/b10)
category_counts = pd.Series(rng.choice(["a", "b", "c"], 40)).value_counts()
for item in category_counts.iteritems():
    print(item)
print("OK")
