# torch_geometric 2.3.1 dimenet_utils.py line 70 (the denominator of the same statement; line 69
# fails first),
# run as written with the module's own np for k=2, m=1
import torch_geometric.nn.models.dimenet_utils as m

k, mm = 2, 1
print(4 * m.np.pi * m.np.math.factorial(k + abs(mm)))
print("OK")
