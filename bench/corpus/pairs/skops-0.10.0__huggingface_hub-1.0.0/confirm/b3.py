# skops/hub_utils/_hf_hub.py:733  HfApi().model_info(repo_id=repo_id, use_auth_token=token), reached by get_model_output()
import numpy as np
from common import hub_utils, offline_error
try:
    hub_utils.get_model_output("someone/model", np.zeros((1, 2)), token="hf_x")
except Exception as e:
    if not offline_error(e):
        raise
    print("HfApi.model_info bound; offline:", type(e).__name__)
