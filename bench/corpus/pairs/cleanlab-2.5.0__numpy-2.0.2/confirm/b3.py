# cleanlab 2.5.0 get_active_learning_scores with multiannotator labels and unlabeled examples: line
# 647
import numpy as np
import pandas as pd
from cleanlab.multiannotator import get_active_learning_scores

labels = pd.DataFrame(
    {"a1": [0, 1, 0, 1, 0, 1], "a2": [0, 1, None, 1, 0, 0], "a3": [None, 1, 0, 0, 0, 1]}
)
rng = np.random.default_rng(0)
p = rng.uniform(0.1, 0.9, 6)
pred_probs = np.stack([p, 1 - p], axis=1)
q = rng.uniform(0.1, 0.9, 3)
unl = np.stack([q, 1 - q], axis=1)
print(get_active_learning_scores(labels, pred_probs, unl))
print("OK")
