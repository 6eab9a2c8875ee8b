# gcastle 1.0.3: Topology.erdos_renyi -> castle/datasets/simulator.py line 563 (nx.to_numpy_matrix)
from castle.datasets.simulator import Topology
B = Topology.erdos_renyi(n_nodes=6, n_edges=8, seed=1)
print(B.shape)
print("OK")
