# sweetviz.series_analyzer_numeric.do_stats_numeric(series, {"stats": {}}) -> line 25 (series.mad())
import numpy as np, pandas as pd
from sweetviz.series_analyzer_numeric import do_stats_numeric
series = pd.Series(np.random.default_rng(0).normal(size=40))
print(do_stats_numeric(series, {"stats": {}})["stats"]["mad"])
print("OK")
