import numpy as np, pandas as pd
import sweetviz as sv
rng = np.random.default_rng(0)
# graph_associations.py line 189: graph_data.append(pd.Series(empty_row_dict, name=str(i)+"RPAD")) run as
# written on a DataFrame (line 186 fails first under the new release)
graph_data = pd.DataFrame({"num": [0.1, 0.2]}, index=["a", "b"])
empty_row_dict = {"num": 0.0}
i = 1
graph_data = graph_data.append(pd.Series(empty_row_dict, name=str(i)+"RPAD"))
print(graph_data)
print("OK")
