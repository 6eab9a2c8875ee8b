# optimum/pipelines/pipelines_base.py:337-338 pipeline() (model=None, accelerator != "ort"):
# the exact expressions of the two lines, with check_task/get_default_model_and_revision from
# transformers.pipelines (the module cannot import on 5.0.0)
from transformers.pipelines import check_task, get_default_model_and_revision

task = "text-classification"
_, target_task, task_options = check_task(task)
model, default_revision = get_default_model_and_revision(target_task, "pt", task_options)
print(model, default_revision)
