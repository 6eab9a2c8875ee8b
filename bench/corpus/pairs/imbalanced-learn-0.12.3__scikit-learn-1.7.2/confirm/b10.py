# EasyEnsembleClassifier.decision_function: imblearn/ensemble/_easy_ensemble.py line 327.
# The module fails to import under the new release (b1); to reach line 327 the missing
# sklearn.utils._tags._safe_tags is given a placeholder first (not used on this path).
import sklearn.utils._tags as _tags
if not hasattr(_tags, "_safe_tags"):
    _tags._safe_tags = None
import numpy as np
from sklearn.datasets import make_classification
X, y = make_classification(n_samples=60, n_features=4, weights=[0.8], random_state=0)
from imblearn.ensemble import EasyEnsembleClassifier
self = EasyEnsembleClassifier(n_estimators=2, random_state=0)
# fit fails earlier under the new release (its RandomUnderSampler, b5), so line 327's expression
# runs as written on the same receiver
X2 = self._validate_data(
    X,
    accept_sparse=["csr", "csc"],
    dtype=None,
    force_all_finite=False,
    reset=False,
)
print(X2.shape)
print("OK")
