from transformers import Cache, DynamicCache, EncoderDecoderCache, HybridCache, PreTrainedModel  # peft/peft_model.py:37
import peft.peft_model
