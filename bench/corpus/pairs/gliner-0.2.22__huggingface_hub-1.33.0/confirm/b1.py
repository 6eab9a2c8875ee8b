# GLiNER.from_pretrained is huggingface_hub's ModelHubMixin.from_pretrained: it calls the
# caller's override GLiNER._from_pretrained (gliner/model.py:769) with the hub's keywords.
import os, tempfile, warnings
warnings.simplefilter("ignore")
os.environ["HF_HUB_OFFLINE"] = "1"
from gliner import GLiNER
d = tempfile.mkdtemp()  # an existing local dir: no download; it holds no weights
try:
    GLiNER.from_pretrained(d)
except (FileNotFoundError, OSError) as e:  # the override bound and its body ran
    print("reached GLiNER._from_pretrained's body:", type(e).__name__, e)
