# graph_associations.py line 186: graph_data = graph_data.append(pd.Series(empty_row_dict, name=categorical))
# run as written on the DataFrame built there (analyze() fails earlier under the new release, b1)
import pandas as pd
graph_data = pd.DataFrame({"num": [0.1, 0.2]}, index=["x", "y"])
empty_row_dict = {"num": 0.0}
categorical = "cat"
graph_data = graph_data.append(pd.Series(empty_row_dict, name=categorical))
print(graph_data)
print("OK")
