# gcastle 1.0.3: DAG.erdos_renyi -> DAG._graph_to_adjmat -> castle/datasets/simulator.py line 64 (nx.to_numpy_matrix)
from castle.datasets.simulator import DAG
W = DAG.erdos_renyi(n_nodes=6, n_edges=8, weight_range=(0.5, 2.0), seed=1)
print(W.shape)
print("OK")
