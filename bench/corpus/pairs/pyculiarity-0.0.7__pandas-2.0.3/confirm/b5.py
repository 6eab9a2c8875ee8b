# pyculiarity 0.0.7: line 257 of pyculiarity/detect_ts.py run as written with the module's own DataFrame
# seasonal_plus_trend = seasonal_plus_trend.append(data_decomp)
import pandas as pd
import sys, pyculiarity; m = sys.modules["pyculiarity.detect_ts"]
DataFrame = m.DataFrame
seasonal_plus_trend = DataFrame(columns=['timestamp', 'value'])
data_decomp = DataFrame({'timestamp': pd.date_range('2020-01-01', periods=3, freq='H'), 'value': [1.0, 2.0, 3.0]})
seasonal_plus_trend = seasonal_plus_trend.append(data_decomp)
print(seasonal_plus_trend.shape)
print("OK")
