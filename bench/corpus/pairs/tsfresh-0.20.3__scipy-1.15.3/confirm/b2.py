# feature_calculators.py line 30's import of ricker run as written (cwt fails first on that line under the
# new release, b1); number_cwt_peaks (line 1324) passes it to find_peaks_cwt, cwt_coefficients (1388) to cwt
import numpy as np
from scipy.signal import find_peaks_cwt, ricker
x = np.sin(np.linspace(0, 6, 50))
print(len(find_peaks_cwt(vector=x, widths=np.array(list(range(1, 4))), wavelet=ricker)))
print("OK")
