# SEM.py line 682 (SEMGraph.__standard_lisrel_masks, also line 690's call) run as written on a graph of the
# kind it receives (to_standard_lisrel on the docstring example fails in both releases for another reason)
import networkx as nx
graph = nx.DiGraph([("x", "y"), ("y", "z")])
nodelist = ["x", "y", "z"]
weight = None
adj_matrix = nx.to_numpy_matrix(graph, nodelist=nodelist, weight=weight).T
print(adj_matrix)
print("OK")
