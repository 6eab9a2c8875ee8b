import numpy as np, pandas as pd
rng = np.random.default_rng(0)
# series_analyzer_text.py line 19: `to_process.source_counts["value_counts_without_nan"].iteritems()` run
# as written on the value-counts Series held there (the analyze() path fails earlier, b1/b10)
source_counts = {"value_counts_without_nan": pd.Series([f"w{i % 5}" for i in range(40)]).value_counts()}
for item in source_counts["value_counts_without_nan"].iteritems():
    print(item)
print("OK")
