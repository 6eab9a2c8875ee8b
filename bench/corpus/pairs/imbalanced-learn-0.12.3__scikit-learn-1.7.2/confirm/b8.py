import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# ValueDifferenceMetric.pairwise line 210 of imblearn/metrics/pairwise.py (fit fails first under the
# new release, so the line's expression runs as written on the same receiver)
from imblearn.metrics.pairwise import ValueDifferenceMetric
Xc = np.random.RandomState(0).randint(0, 3, (20, 2))
self = ValueDifferenceMetric()
self._validate_data(Xc, y=np.arange(20) % 2, reset=True, dtype=np.int32)  # what fit leaves behind
X2 = self._validate_data(Xc, reset=False, dtype=np.int32)
print(X2.shape)
print("OK")
