import numpy as np, pandas as pd
import sweetviz as sv
rng = np.random.default_rng(0)
# dataframe_report.py line 84: [cur_name for cur_name, cur_series in <DataFrame>.iteritems()] run as
# written on a DataFrame (line 74 fails first under the new release)
df = pd.DataFrame({"num": rng.normal(size=40), "target": rng.integers(0, 2, 40)})
names = [cur_name for cur_name, cur_series in df.iteritems()]
print(names)
print("OK")
