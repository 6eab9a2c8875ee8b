# skopt 0.9.0: Normalize.inverse_transform of an Integer dimension -> skopt/space/transformers.py line 275 (np.int)
from skopt.space import Integer
dim = Integer(0, 10, transform="normalize")
print(dim.inverse_transform([0.3, 0.7]))
print("OK")
