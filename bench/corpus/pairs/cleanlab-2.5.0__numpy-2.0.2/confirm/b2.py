# cleanlab 2.5.0 get_label_quality_multiannotator_ensemble with two models' pred_probs: line 436
import numpy as np
import pandas as pd
from cleanlab.multiannotator import get_label_quality_multiannotator_ensemble

labels = pd.DataFrame(
    {"a1": [0, 1, 0, 1, 0, 1], "a2": [0, 1, None, 1, 0, 0], "a3": [None, 1, 0, 0, 0, 1]}
)
rng = np.random.default_rng(0)


def probs(n):
    p = rng.uniform(0.1, 0.9, n)
    return np.stack([p, 1 - p], axis=1)


res = get_label_quality_multiannotator_ensemble(
    labels, np.stack([probs(6), probs(6)]), verbose=False
)
print(res["label_quality"].head(2))
print("OK")
