# MAPIE 0.6.5: metrics.classification_coverage_score -> mapie/metrics.py lines 101-102 (check_array(force_all_finite=True))
import numpy as np
from mapie.metrics import classification_coverage_score
rs = np.random.RandomState(0)
print(classification_coverage_score(rs.randint(0, 3, 20), rs.rand(20, 3) > 0.5))
print("OK")
