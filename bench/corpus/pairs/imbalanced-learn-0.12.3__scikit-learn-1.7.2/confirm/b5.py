import sys, types
# imblearn/__init__ imports imblearn.ensemble, which fails on its own (b1): a stub lets the rest load
sys.modules["imblearn.ensemble"] = types.ModuleType("imblearn.ensemble")
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
# RandomUnderSampler._check_X_y: imblearn/under_sampling/_prototype_selection/_random_under_sampler.py line 102
from imblearn.under_sampling import RandomUnderSampler
Xr, yr = RandomUnderSampler(random_state=0).fit_resample(X, y)
print(Xr.shape)
print("OK")
