# pyculiarity 0.0.7: line 226 of pyculiarity/detect_vec.py run as written with the module's own DataFrame
# (line 225 fails first in detect_vec): seasonal_plus_trend = seasonal_plus_trend.append(data_decomp)
import sys, pyculiarity; m = sys.modules["pyculiarity.detect_vec"]
DataFrame = m.DataFrame
seasonal_plus_trend = DataFrame(columns=['timestamp', 'value'])
data_decomp = DataFrame({'timestamp': [0, 1, 2], 'value': [1.0, 2.0, 3.0]})
seasonal_plus_trend = seasonal_plus_trend.append(data_decomp)
print(seasonal_plus_trend.shape)
print("OK")
