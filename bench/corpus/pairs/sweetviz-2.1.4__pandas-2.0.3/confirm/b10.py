# sweetviz.series_analyzer.get_counts(a named series, as analyze() passes a column) -> line 20:
# value_counts().reset_index() names its columns differently in pandas 2, so set_index("index") fails
import pandas as pd
from sweetviz.series_analyzer import get_counts
print(get_counts(pd.Series(["a", "b", "a", None, "c"], name="cat"))["value_counts_without_nan"])
print("OK")
