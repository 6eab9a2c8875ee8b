import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# RandomOverSampler._check_X_y: imblearn/over_sampling/_random_over_sampler.py line 159
from imblearn.over_sampling import RandomOverSampler
Xr, yr = RandomOverSampler(random_state=0).fit_resample(X, y)
print(Xr.shape)
print("OK")
