# torch_geometric 2.3.1 GraphMaskExplainer's hard-concrete gate in training mode
# (graphmask_explainer.py line 161)
import torch
from torch_geometric.contrib.explain import GraphMaskExplainer

explainer = GraphMaskExplainer(num_layers=1, epochs=1)
print(explainer.hard_concrete(torch.zeros(3), training=True)[1].shape)
print("OK")
