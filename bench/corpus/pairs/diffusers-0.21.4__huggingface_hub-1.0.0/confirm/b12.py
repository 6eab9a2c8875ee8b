# diffusers 0.21.4 diffusers/pipelines/pipeline_utils.py line 1599: `import diffusers` stops at
# utils/constants.py:16 first under
# huggingface_hub 1.0.0, so the call is run as written there (same function, same keyword names,
# benign values).
import os

os.environ["HF_HUB_OFFLINE"] = (
    "1"  # nothing is fetched: the control ends in an offline/not-cached error, caught below
)
import huggingface_hub

try:
    huggingface_hub.snapshot_download(
        "org/tiny-model",
        cache_dir=None,
        resume_download=False,
        proxies=None,
        local_files_only=True,
        use_auth_token=None,
        revision=None,
        allow_patterns=["*.json"],
        ignore_patterns=["*.msgpack"],
        user_agent={"diffusers": "0.21.4"},
    )
except TypeError:
    raise
except Exception as e:
    print("control: the call bound; then", type(e).__name__)
print("OK")
