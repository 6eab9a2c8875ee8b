# span_marker/trainer.py:409  self.tokenizer read inside span_marker.Trainer.get_train_dataloader (a property of transformers.Trainer)
# The caller's __init__ stops at line 115 on 5.0.0, so the instance is set up here with the base initialiser and the
# members the caller's __init__ would set; then the caller's own method runs.
import tempfile
import transformers
from tiny import tiny_model, tiny_dataset
from span_marker import Trainer
from span_marker.label_normalizer import AutoLabelNormalizer
model = tiny_model()
ds = tiny_dataset()
args = transformers.TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], remove_unused_columns=False, use_cpu=True, per_device_train_batch_size=2)
trainer = Trainer.__new__(Trainer)
transformers.Trainer.__init__(trainer, model=model, args=args, data_collator=model.data_collator, train_dataset=ds, eval_dataset=ds, processing_class=model.tokenizer)
trainer.label_normalizer = AutoLabelNormalizer.from_config(model.config)
trainer.get_train_dataloader()
print("train dataloader built")
