# lm_eval/models/hf_vlms.py:37 AUTO_MODEL_CLASS = transformers.AutoModelForVision2Seq in the
# class body
from _pkg import load

print(load("lm_eval.models", "hf_vlms").HFMultimodalLM.AUTO_MODEL_CLASS)
