# skops/hub_utils/_hf_hub.py:749-750  client = InferenceClient(token=token); client.post(json=..., model=repo_id)
# (get_model_output reaches it only after model_info answers online; the line's expression runs here as written)
from common import offline_error
import skops.hub_utils._hf_hub  # the caller's module
from huggingface_hub import InferenceClient
client = InferenceClient(token="hf_x")
try:
    res_bytes = client.post(json={"inputs": {"data": {"x0": [0.0]}}}, model="someone/model")
except Exception as e:
    if not offline_error(e):
        raise
    print("InferenceClient.post bound; offline:", type(e).__name__)
