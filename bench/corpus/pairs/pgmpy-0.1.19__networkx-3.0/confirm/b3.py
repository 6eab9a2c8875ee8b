import numpy as np
import networkx as nx
from pgmpy.models import SEMGraph
sem = SEMGraph(ebunch=[("deferenc", "unionsen"), ("laboract", "unionsen"), ("yrsmill", "unionsen"),
                       ("age", "deferenc"), ("age", "laboract"), ("deferenc", "laboract")],
               latents=[], err_corr=[("yrsmill", "age")], err_var={})
# SEM.py line 602 (SEMGraph.to_lisrel) run as written on the same receiver (line 599 fails first)
self = sem
nodelist = list(self.observed) + list(self.latents)
m = nx.to_numpy_matrix(self.err_graph, nodelist=nodelist, weight=None)
print(m.shape)
print("OK")
