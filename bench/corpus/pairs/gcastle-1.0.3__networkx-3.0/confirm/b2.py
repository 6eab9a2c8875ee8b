# gcastle 1.0.3: IIDSimulation(method='linear') -> _simulate_linear_sem -> castle/datasets/simulator.py line 325 (nx.from_numpy_matrix)
import numpy as np
from castle.datasets.simulator import IIDSimulation
W = np.triu(np.ones((4, 4)), k=1) * 1.5
sim = IIDSimulation(W=W, n=50, method="linear", sem_type="gauss")
print(sim.X.shape)
print("OK")
