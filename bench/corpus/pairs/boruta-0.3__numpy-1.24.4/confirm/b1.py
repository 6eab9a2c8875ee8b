# Boruta 0.3: BorutaPy(RandomForestClassifier).fit(X, y) -> BorutaPy._fit line 260 (dtype=np.int)
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from boruta import BorutaPy
X, y = make_classification(n_samples=100, n_features=6, n_informative=3, random_state=0)
b = BorutaPy(RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0), n_estimators=20, max_iter=10, random_state=0)
b.fit(X, y)
print(b.support_, b.ranking_)
print("OK")
