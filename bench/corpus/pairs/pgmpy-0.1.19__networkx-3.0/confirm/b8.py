# pgmpy DAG.get_random(n_nodes=5, edge_prob=0.5) -> pgmpy/base/DAG.py line 1054
import numpy as np
from pgmpy.base import DAG
np.random.seed(0)
print(DAG.get_random(n_nodes=5, edge_prob=0.5).edges())
print("OK")
