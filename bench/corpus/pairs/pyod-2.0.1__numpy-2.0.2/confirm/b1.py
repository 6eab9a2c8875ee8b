# pyod 2.0.1: generate_data(n_nan=2) -> pyod/utils/data.py line 78 (np.NaN)
from pyod.utils.data import generate_data
X_train, X_test, y_train, y_test = generate_data(n_train=20, n_test=10, n_features=2, random_state=0, n_nan=2)
print(X_train.shape)
print("OK")
