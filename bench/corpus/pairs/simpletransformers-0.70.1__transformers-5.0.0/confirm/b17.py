from transformers.models.deprecated.mmbt.modeling_mmbt import MMBTModel  # mmbt_model.py:4
