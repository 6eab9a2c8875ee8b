# skopt 0.9.0: Normalize.transform of an Integer dimension -> skopt/space/transformers.py line 262 (np.int)
from skopt.space import Integer
dim = Integer(0, 10, transform="normalize")
print(dim.transform([3, 7]))
print("OK")
