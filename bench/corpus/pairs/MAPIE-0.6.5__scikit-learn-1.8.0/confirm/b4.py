# MAPIE 0.6.5: MapieClassifier() with no estimator -> check_estimator_classification -> mapie/utils.py line 822
# (LogisticRegression(multi_class="multinomial").fit(X, y))
import numpy as np
from mapie.classification import MapieClassifier
rs = np.random.RandomState(0)
X = rs.rand(80, 3); y = rs.randint(0, 3, 80)
m = MapieClassifier(method="score", cv=3).fit(X, y)
print(m.predict(X[:3], alpha=0.2)[1].shape)
print("OK")
