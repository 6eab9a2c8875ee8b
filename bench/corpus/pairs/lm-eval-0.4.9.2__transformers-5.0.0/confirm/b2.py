# lm_eval/models/huggingface.py:961-963 HFLM._model_call (causal) asserts AUTO_MODEL_CLASS in
# (..., transformers.AutoModelForVision2Seq)
import torch
from _pkg import load
from _tiny import tiny_gpt2

HFLM = load("lm_eval.models", "huggingface").HFLM
model, tok = tiny_gpt2()
lm = HFLM(pretrained=model, tokenizer=tok, backend="causal", batch_size=1, device="cpu")
print(lm._model_call(torch.tensor([[3, 4, 5]])).shape)
