# span_marker/trainer.py:115  args = dataclasses.replace(args, include_inputs_for_metrics=True, remove_unused_columns=False)
import tempfile
from tiny import tiny_model, tiny_dataset
from span_marker import Trainer
from transformers import TrainingArguments
args = TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], per_device_train_batch_size=2, max_steps=1, use_cpu=True)
trainer = Trainer(model=tiny_model(), args=args, train_dataset=tiny_dataset())
print("span_marker Trainer built:", trainer.args.include_inputs_for_metrics)
