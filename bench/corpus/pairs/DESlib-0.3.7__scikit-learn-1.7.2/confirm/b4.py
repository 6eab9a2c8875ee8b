# DESlib 0.3.7: StaticSelection.fit on a fitted pool -> deslib/static/static_selection.py line 89 (self._validate_data, a BaseEstimator method)
import numpy as np
from sklearn.ensemble import BaggingClassifier
from sklearn.linear_model import Perceptron
from deslib.static.static_selection import StaticSelection
rs = np.random.RandomState(0)
X = rs.rand(120, 4); y = (X[:, 0] + X[:, 1] > 1).astype(int)
pool = BaggingClassifier(Perceptron(max_iter=10), n_estimators=5, random_state=0).fit(X[:60], y[:60])
clf = StaticSelection(pool, random_state=0)
clf.fit(X[60:], y[60:])
print(clf.predict(X[:5]))
print("OK")
