import os, tempfile
from transformers import TrainingArguments
out = tempfile.mkdtemp(); open(os.path.join(out, "x"), "w").close()
training_args = TrainingArguments(output_dir=out, do_train=True)
cond = (
    os.path.exists(training_args.output_dir)
    and os.listdir(training_args.output_dir)
    and training_args.do_train
    and not training_args.overwrite_output_dir  # FlagEmbedding/abc/finetune/reranker/AbsRunner.py:46
)
print(cond)
