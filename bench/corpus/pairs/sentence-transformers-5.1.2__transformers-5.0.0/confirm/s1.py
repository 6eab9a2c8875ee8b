# transformers' Trainer._inner_training_loop resumes under FSDP / SageMaker MP with
# self._load_from_checkpoint(resume_from_checkpoint, self.model_wrapped) (trainer.py:2507 in
# 4.57.6, :2371 in 5.0.0): the same expression, on sentence-transformers' trainer class.
import inspect

import transformers
from sentence_transformers.trainer import SentenceTransformerTrainer

src = inspect.getsource(transformers.Trainer._inner_training_loop)
assert "self._load_from_checkpoint(resume_from_checkpoint, self.model_wrapped)" in src
trainer = SentenceTransformerTrainer.__new__(SentenceTransformerTrainer)
trainer.model_wrapped = object()
SentenceTransformerTrainer._load_from_checkpoint(trainer, "ckpt", trainer.model_wrapped)
