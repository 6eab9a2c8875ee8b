"""A dead loopback endpoint: a call that binds fails only when it tries to connect."""
import os, warnings
warnings.simplefilter("ignore")
for k in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACEHUB_API_TOKEN"):
    os.environ.pop(k, None)  # no token: the caller does not call huggingface_hub.login
URL = "http://127.0.0.1:9/"

def refused(e):
    name = type(e).__name__
    return "Connect" in name or "Connection" in name or isinstance(e, OSError) or "ClientConnector" in name
