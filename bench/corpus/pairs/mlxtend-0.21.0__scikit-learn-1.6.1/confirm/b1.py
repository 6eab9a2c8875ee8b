import warnings; warnings.simplefilter("ignore")
import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.linear_model import LogisticRegression, LinearRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
X, y = make_classification(n_samples=80, n_features=5, random_state=0)
Xr, yr = make_regression(n_samples=80, n_features=5, random_state=0)
# mlxtend StackingCVClassifier([LR, KNN], LR).fit -> classifier/stacking_cv_classification.py lines 261-272:
# cross_val_predict(..., fit_params=fit_params, ...)
from mlxtend.classifier import StackingCVClassifier
m = StackingCVClassifier([LogisticRegression(), KNeighborsClassifier()], LogisticRegression(), random_state=0).fit(X, y)
print(m.predict(X)[:5])
print("OK")
