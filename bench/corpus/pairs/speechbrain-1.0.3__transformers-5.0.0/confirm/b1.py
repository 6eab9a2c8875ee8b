# speechbrain/lobes/models/huggingface_transformers/huggingface.py:31-40, the module's import block
from transformers import (
    AutoConfig,
    AutoFeatureExtractor,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForPreTraining,
    AutoModelForSeq2SeqLM,
    AutoModelWithLMHead,
    AutoTokenizer,
)
print(AutoModelWithLMHead)
