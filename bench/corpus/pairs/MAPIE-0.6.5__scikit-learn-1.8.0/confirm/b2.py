# MAPIE 0.6.5: metrics.classification_mean_width_score -> mapie/metrics.py lines 176-177 (check_array(force_all_finite=True))
import numpy as np
from mapie.metrics import classification_mean_width_score
rs = np.random.RandomState(0)
print(classification_mean_width_score(rs.rand(20, 3) > 0.5))
print("OK")
