# pyod 2.0.1: line 79 of pyod/utils/data.py run as written, with pyod.utils.data's own `np`
# (line 78 fails first inside generate_data): y = np.r_[y, np.full((n_nan), np.NaN)]
from pyod.utils import data
np = data.np
y = np.zeros(5); n_nan = 2
y = np.r_[y, np.full((n_nan), np.NaN)]
print(y)
print("OK")
