import warnings; warnings.simplefilter("ignore")
import numpy as np, pandas as pd
import category_encoders as ce
from category_encoders.wrapper import PolynomialWrapper
rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 40), "n": rng.normal(size=40)})
y3 = pd.Series(rng.choice(["u", "v", "w"], 40))
# category_encoders OneHotEncoder(cols=["a"]).fit(X) -> one_hot.py line 145 (values.iteritems())
enc = ce.OneHotEncoder(cols=["a"]).fit(X)
print(enc.transform(X).shape)
print("OK")
