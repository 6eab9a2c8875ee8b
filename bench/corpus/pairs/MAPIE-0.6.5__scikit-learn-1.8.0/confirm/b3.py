# MAPIE 0.6.5: MapieMultiLabelClassifier() with no estimator -> mapie/multi_label_classification.py line 303
# (LogisticRegression(multi_class="multinomial"))
import numpy as np
from mapie.multi_label_classification import MapieMultiLabelClassifier
rs = np.random.RandomState(0)
X = rs.rand(80, 3)
Y = (rs.rand(80, 3) > 0.5).astype(int); Y[Y.sum(axis=1) == 0, 1] = 1
m = MapieMultiLabelClassifier(random_state=0).fit(X, Y)
print(m.predict(X[:3], alpha=0.3, method="crc")[0].shape)
print("OK")
