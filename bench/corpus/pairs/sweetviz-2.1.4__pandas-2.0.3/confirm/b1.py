import numpy as np, pandas as pd
import sweetviz as sv
rng = np.random.default_rng(0)
# sweetviz.analyze -> DataframeReport.__init__ line 74 (source_df.iteritems())
df = pd.DataFrame({"num": rng.normal(size=40), "target": rng.integers(0, 2, 40)})
sv.analyze(df, target_feat="target", pairwise_analysis="off")
print("OK")
