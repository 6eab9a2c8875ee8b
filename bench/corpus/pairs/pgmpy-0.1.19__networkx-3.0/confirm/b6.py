# SEMAlg(eta, B, zeta, wedge_y).to_SEMGraph() -> pgmpy/models/SEM.py line 913
import numpy as np
from pgmpy.models import SEMAlg
m = SEMAlg(eta=["x", "y", "z"], B=np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]]),
           zeta=np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1]]), wedge_y=np.eye(3))
g = m.to_SEMGraph()
print(sorted(g.graph.edges()))
print("OK")
