from huggingface_hub import hf_hub_download
from huggingface_hub.utils import LocalEntryNotFoundError, RepositoryNotFoundError
__version__ = "3.3.2"  # pyannote.audio.__version__
use_auth_token = None  # Model.from_pretrained / Pipeline.from_pretrained default
model_id, revision, cache_dir = "pyannote/segmentation", None, None

HF_PYTORCH_WEIGHTS_NAME = "pytorch_model.bin"  # pyannote/audio/core/model.py:60
try:
    path_for_pl = hf_hub_download(  # pyannote/audio/core/model.py:606-620 (Model.from_pretrained)
        model_id,
        HF_PYTORCH_WEIGHTS_NAME,
        repo_type="model",
        revision=revision,
        library_name="pyannote",
        library_version=__version__,
        cache_dir=cache_dir,
        use_auth_token=use_auth_token,
    )
except LocalEntryNotFoundError:
    print("call bound; offline (HF_HUB_OFFLINE=1), as expected")
