# diffusers 0.21.4 diffusers/configuration_utils.py line 370: `import diffusers` stops at
# utils/constants.py:16 first under
# huggingface_hub 1.0.0, so the call is run as written there (same function, same keyword names,
# benign values).
import os

os.environ["HF_HUB_OFFLINE"] = (
    "1"  # nothing is fetched: the control ends in an offline/not-cached error, caught below
)
import huggingface_hub

try:
    huggingface_hub.hf_hub_download(
        "org/tiny-model",
        filename="diffusion_pytorch_model.bin",
        cache_dir=None,
        force_download=False,
        proxies=None,
        resume_download=False,
        local_files_only=True,
        use_auth_token=None,
        user_agent={"diffusers": "0.21.4"},
        subfolder=None,
        revision=None,
    )
except TypeError:
    raise
except Exception as e:
    print("control: the call bound; then", type(e).__name__)
print("OK")
