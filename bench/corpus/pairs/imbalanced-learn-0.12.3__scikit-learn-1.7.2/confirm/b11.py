# imblearn/ensemble/_easy_ensemble.py lines 338-342 (EasyEnsembleClassifier.decision_function):
# delayed(_parallel_decision_function)(estimators, estimators_features, X) -- the call run as written
# with the same kinds of arguments (the module cannot be imported under the new release, b1)
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble._bagging import _parallel_decision_function
from sklearn.linear_model import LogisticRegression
X, y = make_classification(n_samples=60, n_features=4, random_state=0)
estimators_ = [LogisticRegression().fit(X, y), LogisticRegression(C=0.5).fit(X, y)]
estimators_features_ = [np.arange(4), np.arange(4)]
out = _parallel_decision_function(estimators_[0:2], estimators_features_[0:2], X)
print(out[:3])
print("OK")
