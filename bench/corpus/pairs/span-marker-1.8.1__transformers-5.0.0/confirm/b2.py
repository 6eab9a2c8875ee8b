# span_marker/trainer.py:111-113  args = TrainingArguments(output_dir=..., include_inputs_for_metrics=True, remove_unused_columns=False)
import os, tempfile
from tiny import tiny_model, tiny_dataset
from span_marker import Trainer
os.chdir(tempfile.mkdtemp())  # args=None: the caller builds its own TrainingArguments (output_dir relative)
trainer = Trainer(model=tiny_model(), train_dataset=tiny_dataset())
print("span_marker Trainer built with its default args:", trainer.args.include_inputs_for_metrics)
