# skops/hub_utils/_hf_hub.py:567  client.update_repo_visibility(...) on client = HfApi(), reached by push(private=...)
from common import hub_utils, skops_repo, offline_error
repo = skops_repo()
try:
    hub_utils.push(repo_id="someone/model", source=repo, token="hf_x", private=True, create_remote=False)
except Exception as e:
    if not offline_error(e):
        raise
    print("HfApi.update_repo_visibility bound; offline:", type(e).__name__)
