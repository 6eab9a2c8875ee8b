import warnings; warnings.simplefilter("ignore")
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, LinearRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
X, y = make_classification(n_samples=80, n_features=5, random_state=0)
Xr, yr = make_regression(n_samples=80, n_features=5, random_state=0)
# mlxtend SequentialFeatureSelector(LR, k_features=2, cv=3).fit -> feature_selection/utilities.py
# _calc_score lines 98-108: cross_val_score(..., fit_params=fit_params)
from mlxtend.feature_selection import SequentialFeatureSelector
s = SequentialFeatureSelector(LogisticRegression(), k_features=2, cv=3).fit(X, y)
print(s.k_feature_idx_)
print("OK")
