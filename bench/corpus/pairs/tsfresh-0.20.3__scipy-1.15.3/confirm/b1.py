# tsfresh 0.20.3: import tsfresh -> tsfresh/feature_extraction/feature_calculators.py line 30 (cwt);
# the control also runs cwt_coefficients (line 1388) through the module
import numpy as np
import tsfresh
from tsfresh.feature_extraction import feature_calculators as fc
x = np.sin(np.linspace(0, 6, 50))
print(list(fc.cwt_coefficients(x, [{"widths": (2, 5), "coeff": 0, "w": 2}])))
print("OK")
