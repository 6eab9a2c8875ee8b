import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# ValueDifferenceMetric.pairwise line 214 (Y given): the line's expression as written on the same receiver
from imblearn.metrics.pairwise import ValueDifferenceMetric
Yc = np.random.RandomState(1).randint(0, 3, (5, 2))
self = ValueDifferenceMetric()
Y = self._validate_data(Yc, reset=True, dtype=np.int32)
print(Y.shape)
print("OK")
