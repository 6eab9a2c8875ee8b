# skops/hub_utils/_hf_hub.py:679-681  snapshot_download(repo_id=..., revision=..., use_auth_token=token, **kwargs), reached by download()
import os, tempfile
from common import hub_utils, offline_error
try:
    hub_utils.download(repo_id="someone/model", dst=os.path.join(tempfile.mkdtemp(), "dst"), token="hf_x", local_files_only=True)
except Exception as e:
    if not offline_error(e):
        raise
    print("snapshot_download bound; offline:", type(e).__name__)
