# diffusers 0.21.4 imported: diffusers.utils.constants line 16 (every diffusers import goes through
# it)
from diffusers.utils import constants

print(constants.HF_MODULES_CACHE)
print("OK")
