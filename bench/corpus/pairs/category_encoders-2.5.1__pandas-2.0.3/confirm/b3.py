import warnings; warnings.simplefilter("ignore")
import numpy as np, pandas as pd
import category_encoders as ce
from category_encoders.wrapper import PolynomialWrapper
rng = np.random.default_rng(0)
X = pd.DataFrame({"a": rng.choice(["x", "y", "z"], 40), "n": rng.normal(size=40)})
y3 = pd.Series(rng.choice(["u", "v", "w"], 40))
if not hasattr(pd.Series, "iteritems"):
    # placeholder: the label OneHotEncoder fails first otherwise (b1)
    pd.Series.iteritems = pd.Series.items
# PolynomialWrapper(TargetEncoder).fit_transform(X, 3-class y) -> wrapper.py line 112 (labels.iteritems())
out = PolynomialWrapper(ce.TargetEncoder(cols=["a"])).fit_transform(X, y3)
print(out.shape)
print("OK")
