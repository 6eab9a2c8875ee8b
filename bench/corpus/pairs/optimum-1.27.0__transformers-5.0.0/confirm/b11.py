# optimum/pipelines/pipelines_base.py:48: the same import, this name alone
from transformers.pipelines import infer_framework_load_model

print(infer_framework_load_model)
