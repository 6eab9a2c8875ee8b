# span_marker/trainer.py:140-152  super().__init__(model=..., args=..., data_collator=..., train_dataset=..., eval_dataset=...,
#     tokenizer=model.tokenizer, model_init=None, compute_metrics=..., callbacks=..., optimizers=..., preprocess_logits_for_metrics=...)
# run as written on transformers.Trainer (the caller's class stops earlier, at line 115, on 5.0.0)
import tempfile
import transformers
from tiny import tiny_model, tiny_dataset
model = tiny_model()
args = transformers.TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], remove_unused_columns=False, use_cpu=True)
trainer = transformers.Trainer(model=model, args=args, data_collator=model.data_collator, train_dataset=tiny_dataset(),
    eval_dataset=None, tokenizer=model.tokenizer, model_init=None, compute_metrics=None, callbacks=None,
    optimizers=(None, None), preprocess_logits_for_metrics=None)
print("transformers.Trainer accepted tokenizer=")
