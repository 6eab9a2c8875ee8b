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
# PolynomialWrapper(TargetEncoder).fit(X, 3-class y) -> wrapper.py line 65 (labels.iteritems() on a DataFrame)
w = PolynomialWrapper(ce.TargetEncoder(cols=["a"]))
w.fit(X, y3)  # fit returns None in this release
print(w.transform(X).shape)
print("OK")
