# pyculiarity 0.0.7: detect_vec -> detect_anoms -> pyculiarity/detect_anoms.py line 58 (ps.Int64Index)
import numpy as np, pandas as pd
from pyculiarity import detect_vec
rs = np.random.RandomState(0)
v = pd.Series(np.sin(np.arange(200) * 2 * np.pi / 20) * 10 + rs.rand(200)); v[50] = 60
r = detect_vec(v, period=20, max_anoms=0.02, direction="both")
print(r["anoms"])
print("OK")
