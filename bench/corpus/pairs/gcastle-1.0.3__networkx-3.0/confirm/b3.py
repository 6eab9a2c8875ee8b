# gcastle 1.0.3: IIDSimulation(method='nonlinear', sem_type='mlp') -> _simulate_nonlinear_sem -> castle/datasets/simulator.py line 416 (nx.from_numpy_matrix)
import numpy as np
from castle.datasets.simulator import IIDSimulation
W = np.triu(np.ones((4, 4)), k=1) * 1.5
sim = IIDSimulation(W=W, n=50, method="nonlinear", sem_type="mlp")
print(sim.X.shape)
print("OK")
