# pyod 2.0.1: line 83 of pyod/utils/data.py run as written, with pyod.utils.data's own `np`
# (line 82 fails first inside generate_data): y = np.r_[y, np.full((n_inf), np.infty)]
from pyod.utils import data
np = data.np
y = np.zeros(5); n_inf = 2
y = np.r_[y, np.full((n_inf), np.infty)]
print(y)
print("OK")
