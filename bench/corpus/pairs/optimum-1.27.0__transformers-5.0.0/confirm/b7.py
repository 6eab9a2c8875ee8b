# optimum/pipelines/pipelines_base.py:19: the same import, this name alone
from transformers import ImageToTextPipeline

print(ImageToTextPipeline)
