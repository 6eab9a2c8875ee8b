# cleanlab 2.5.0 get_active_learning_scores_ensemble with two models' pred_probs and unlabeled
# examples: line 799
import numpy as np
import pandas as pd
from cleanlab.multiannotator import get_active_learning_scores_ensemble

labels = pd.DataFrame(
    {"a1": [0, 1, 0, 1, 0, 1], "a2": [0, 1, None, 1, 0, 0], "a3": [None, 1, 0, 0, 0, 1]}
)
rng = np.random.default_rng(0)


def probs(n):
    p = rng.uniform(0.1, 0.9, n)
    return np.stack([p, 1 - p], axis=1)


print(
    get_active_learning_scores_ensemble(
        labels, np.stack([probs(6), probs(6)]), np.stack([probs(3), probs(3)])
    )
)
print("OK")
