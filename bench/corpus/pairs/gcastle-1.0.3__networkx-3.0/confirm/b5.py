# gcastle 1.0.3: THPSimulation(causal, topology) -> castle/datasets/simulator.py line 597 (nx.from_numpy_matrix)
import numpy as np
from castle.datasets.simulator import THPSimulation
causal = np.triu(np.ones((4, 4)), k=1)
topo = np.ones((4, 4)) - np.eye(4)
sim = THPSimulation(causal, topo, mu_range=(0.00005, 0.0001), alpha_range=(0.005, 0.007))
print(type(sim._topo).__name__)
print("OK")
