# optimum/configuration_utils.py:28: the same import, this name alone
from transformers.utils import is_remote_url

print(is_remote_url)
