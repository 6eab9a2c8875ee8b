# pyculiarity 0.0.7: line 256 of pyculiarity/detect_ts.py run as written with the module's own DataFrame
# (detect_ts reaches it only past detect_anoms line 58): all_anoms = all_anoms.append(anoms)
import pandas as pd
import sys, pyculiarity; m = sys.modules["pyculiarity.detect_ts"]
DataFrame = m.DataFrame
all_anoms = DataFrame(columns=['timestamp', 'value'])
anoms = DataFrame({'timestamp': pd.date_range('2020-01-01', periods=2, freq='H'), 'value': [60.0, 61.0]})
all_anoms = all_anoms.append(anoms)
print(all_anoms.shape)
print("OK")
