# jury/metrics/accuracy/accuracy_for_language_generation.py:76  return datasets.MetricInfo(description=..., citation=..., inputs_description=..., features=..., ...)
# (the metric's _info; its class cannot be imported on 3.0.0 -- base.py:42 -- so the expression runs as written)
import warnings
warnings.simplefilter("ignore")
import datasets
features = datasets.Features({"predictions": datasets.Sequence(datasets.Value("string", id="sequence")),
                              "references": datasets.Sequence(datasets.Value("string", id="sequence"))})
info = datasets.MetricInfo(description="d", citation="c", inputs_description="i", features=features, reference_urls=["u"])
print(info.features)
