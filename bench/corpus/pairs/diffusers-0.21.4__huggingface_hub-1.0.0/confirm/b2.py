# diffusers 0.21.4 diffusers/utils/hub_utils.py line 28 imports HfFolder from huggingface_hub; the
# module is only reached after
# utils/constants.py:16, which fails first under huggingface_hub 1.0.0, so the name's import is run
# as written.
from huggingface_hub import HfFolder

print(HfFolder)
print("OK")
