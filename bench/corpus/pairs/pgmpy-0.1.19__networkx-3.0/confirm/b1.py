import numpy as np
import networkx as nx
from pgmpy.models import SEMGraph
sem = SEMGraph(ebunch=[("deferenc", "unionsen"), ("laboract", "unionsen"), ("yrsmill", "unionsen"),
                       ("age", "deferenc"), ("age", "laboract"), ("deferenc", "laboract")],
               latents=[], err_corr=[("yrsmill", "age")], err_var={})
# pgmpy SEMGraph.to_lisrel() (docstring example model) -> pgmpy/models/SEM.py line 599
lisrel = sem.to_lisrel()
print(type(lisrel).__name__)
print("OK")
