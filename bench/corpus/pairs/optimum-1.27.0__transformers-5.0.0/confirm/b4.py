# optimum/configuration_utils.py:75
# BaseConfig(PretrainedConfig).save_pretrained(push_to_hub=True) calls self._create_repo
from transformers import PretrainedConfig

self = PretrainedConfig()
print(self._create_repo)
