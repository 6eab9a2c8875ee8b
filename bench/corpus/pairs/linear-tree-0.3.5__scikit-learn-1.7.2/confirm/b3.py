# linear-tree 0.3.5: fitted LinearBoostRegressor.transform -> lineartree/_classes.py line 986 (self._validate_data)
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import LinearRegression
from lineartree import LinearTreeRegressor, LinearBoostRegressor
rs = np.random.RandomState(0)
X = rs.rand(200, 3); y = X[:, 0] * 3 + (X[:, 1] > 0.5) * 2 + rs.rand(200) * 0.1
# fit() itself stops at lineartree/lineartree.py (self._validate_data there, not in this pair's files); to get a
# fitted model on scikit-learn 1.7 the removed method is lent for the fit only and taken away again before the call.
shimmed = not hasattr(BaseEstimator, "_validate_data")
if shimmed:
    from sklearn.utils.validation import validate_data
    BaseEstimator._validate_data = lambda self, *a, **k: validate_data(self, *a, **k)
m = LinearBoostRegressor(LinearRegression(), n_estimators=3).fit(X, y)
if shimmed:
    del BaseEstimator._validate_data
print(m.transform(X[:5]).shape)
print("OK")
