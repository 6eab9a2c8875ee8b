# auto_round/export/export_to_itrex/config.py:249 QuantConfig.save_pretrained calls
# self._set_token_in_kwargs
import tempfile

from auto_round.export.export_to_itrex.config import QuantConfig

QuantConfig(bits=4, group_size=32).save_pretrained(tempfile.mkdtemp())
print("saved")
