import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# line 160 of imblearn/over_sampling/_random_over_sampler.py, run as written on the same receiver
# (line 159 fails before it under the new release)
from imblearn.over_sampling import RandomOverSampler
self = RandomOverSampler(random_state=0)
self._check_feature_names(X, reset=True)
print("OK")
