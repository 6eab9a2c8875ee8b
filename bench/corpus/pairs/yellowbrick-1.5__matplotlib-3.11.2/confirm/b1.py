# yellowbrick 1.5: DataVisualizer.fit with a continuous target -> yellowbrick/features/base.py line 408 (mpl.cm.get_cmap)
import matplotlib; matplotlib.use("Agg")
import numpy as np
from yellowbrick.features.base import DataVisualizer
rs = np.random.RandomState(0)
v = DataVisualizer()
v.fit(rs.rand(40, 4), rs.rand(40))
print(v._colors)
print("OK")
