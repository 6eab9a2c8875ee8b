# cleanlab 2.5.0 get_label_quality_multiannotator on 6 examples x 3 annotators (some missing), 2
# classes: line 179
import numpy as np
import pandas as pd
from cleanlab.multiannotator import get_label_quality_multiannotator

labels = pd.DataFrame(
    {"a1": [0, 1, 0, 1, 0, 1], "a2": [0, 1, None, 1, 0, 0], "a3": [None, 1, 0, 0, 0, 1]}
)
rng = np.random.default_rng(0)
p = rng.uniform(0.1, 0.9, 6)
pred_probs = np.stack([p, 1 - p], axis=1)
res = get_label_quality_multiannotator(labels, pred_probs, verbose=False)
print(res["label_quality"].head(2))
print("OK")
