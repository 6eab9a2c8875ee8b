# auto_round/export/export_to_itrex/config.py:259 save_pretrained(push_to_hub=True) calls
# self._create_repo
from auto_round.export.export_to_itrex.config import QuantConfig

self = QuantConfig(bits=4, group_size=32)
print(self._create_repo)
