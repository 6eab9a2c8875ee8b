# jury/metrics/_core/base.py:42  class Metric(datasets.Metric, ABC) -- reached by `import jury`
import warnings
warnings.simplefilter("ignore")
import jury
metric = jury.load_metric("accuracy")  # a jury metric: subclass of the caller's Metric (base.py:42)
print(metric.compute(predictions=[["the cat"]], references=[["the cat"]]))
