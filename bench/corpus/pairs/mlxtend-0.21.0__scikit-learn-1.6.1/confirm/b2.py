import warnings; warnings.simplefilter("ignore")
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, LinearRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
X, y = make_classification(n_samples=80, n_features=5, random_state=0)
Xr, yr = make_regression(n_samples=80, n_features=5, random_state=0)
# mlxtend StackingCVRegressor([LinearRegression, Ridge], LinearRegression).fit -> regressor/stacking_cv_regression.py
# lines 217-226: cross_val_predict(..., fit_params=fit_params, ...)
from mlxtend.regressor import StackingCVRegressor
m = StackingCVRegressor([LinearRegression(), Ridge()], LinearRegression()).fit(Xr, yr)
print(m.predict(Xr)[:3])
print("OK")
