# lifelines/fitters/coxph_fitter.py line 12, run as written (the package import fails first under the
# new release, b1); line 2511 calls the imported trapz
from scipy.integrate import trapz
import numpy as np
print(trapz(np.ones((2, 3)), np.arange(3.0)))
print("OK")
