# SEM.py lines 919-922 (SEMAlg.to_SEMGraph) run as written on the same receivers (line 913 fails first)
import numpy as np
import networkx as nx
from pgmpy.models import SEMAlg
self = SEMAlg(eta=["x", "y", "z"], B=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
              zeta=np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1]]), wedge_y=np.eye(3))
zeta = self.zeta.copy()
np.fill_diagonal(zeta, 0)
err_graph = nx.relabel_nodes(
    nx.from_numpy_matrix(zeta.T, create_using=nx.Graph),
    mapping={i: self.eta[i] for i in range(self.zeta.shape[0])},
)
print(sorted(err_graph.edges()))
print("OK")
