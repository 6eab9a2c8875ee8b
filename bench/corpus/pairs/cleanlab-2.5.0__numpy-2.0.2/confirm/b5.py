# cleanlab 2.5.0 get_majority_vote_label on 6 examples x 3 annotators (some missing): line 947
import pandas as pd
from cleanlab.multiannotator import get_majority_vote_label

labels = pd.DataFrame(
    {"a1": [0, 1, 0, 1, 0, 1], "a2": [0, 1, None, 1, 0, 0], "a3": [None, 1, 0, 0, 0, 1]}
)
print(get_majority_vote_label(labels, verbose=False))
print("OK")
