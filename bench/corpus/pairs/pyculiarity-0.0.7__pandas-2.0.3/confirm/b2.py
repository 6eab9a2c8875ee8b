# pyculiarity 0.0.7: detect_vec -> pyculiarity/detect_vec.py line 225 (DataFrame.append).
# On pandas 2 detect_anoms line 58 fails first (b1): the removed pd.Int64Index is given back here (only where
# missing) so that detect_vec runs on to line 225.
import numpy as np, pandas as pd
if not hasattr(pd, "Int64Index"):
    pd.Int64Index = pd.Index
from pyculiarity import detect_vec
rs = np.random.RandomState(0)
v = pd.Series(np.sin(np.arange(200) * 2 * np.pi / 20) * 10 + rs.rand(200)); v[50] = 60
r = detect_vec(v, period=20, max_anoms=0.02, direction="both")
print(r["anoms"])
print("OK")
