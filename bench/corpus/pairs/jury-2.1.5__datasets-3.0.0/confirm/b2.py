# jury/metrics/_core/auto.py:111  metric = datasets.load_metric(resolved_path.path, **kwargs)
# (the fallback for metrics jury does not ship; `import jury` stops at base.py:42 first on 3.0.0, so the line runs as written)
import os, tempfile, warnings
warnings.simplefilter("ignore")
import datasets
path = os.path.join(tempfile.mkdtemp(), "no_such_metric.py")
try:
    metric = datasets.load_metric(path)
except FileNotFoundError as e:
    print("datasets.load_metric bound; no such local script:", type(e).__name__)
