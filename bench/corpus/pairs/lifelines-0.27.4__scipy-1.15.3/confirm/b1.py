# lifelines 0.27.4: import lifelines -> lifelines/fitters/__init__.py line 21; then
# RegressionFitter-based predict_expectation-like integral (line 2499) needs trapz
import lifelines
from lifelines import WeibullAFTFitter
from lifelines.datasets import load_rossi
df = load_rossi().head(80)
m = WeibullAFTFitter().fit(df, "week", "arrest")
print(m.predict_expectation(df.head(3)))
print("OK")
