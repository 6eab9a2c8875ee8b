# transformers 4.38.2 Trainer built on a tiny random BERT (CPU): __init__ ->
# create_accelerator_and_postprocess,
# which passes AcceleratorConfig().to_dict() (split_batches, dispatch_batches, even_batches,
# use_seedable_sampler)
# into Accelerator(**accelerator_kwargs), trainer.py line 4127
import tempfile

from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

m = BertForSequenceClassification(
    BertConfig(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        vocab_size=50,
    )
)
t = Trainer(
    model=m, args=TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True)
)
print(type(t.accelerator).__name__)
print("OK")
