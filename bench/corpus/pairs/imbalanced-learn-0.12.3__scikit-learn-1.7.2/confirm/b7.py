import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# ValueDifferenceMetric.fit: imblearn/metrics/pairwise.py line 151
from imblearn.metrics.pairwise import ValueDifferenceMetric
Xc = np.random.RandomState(0).randint(0, 3, (20, 2))
vdm = ValueDifferenceMetric().fit(Xc, np.arange(20) % 2)
print(vdm.proba_per_class_[0].shape)
print("OK")
