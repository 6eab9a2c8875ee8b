# evaluate 0.4.1 utils.file_utils.cached_path on a hub URL with a datasets DownloadConfig (offline:
# local_files_only, so nothing is fetched): the get_from_cache call reads
# download_config.use_auth_token, line 185.
# Also loads and computes a small local metric (exercises loading.py and module.py on this datasets
# release).
import os

os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"
import evaluate
from datasets import DownloadConfig
from evaluate.utils.file_utils import cached_path

m = evaluate.load(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "exact_metric", "exact_metric.py")
)
m.add_batch(predictions=[1, 2, 3], references=[1, 2, 4])
print(m.compute())
try:
    cached_path(
        "https://huggingface.co/spaces/evaluate-metric/x/resolve/main/x.py",
        download_config=DownloadConfig(local_files_only=True),
    )
except FileNotFoundError as e:  # the control: offline, no cache -> a clean "not found"
    print("not cached (expected offline):", str(e)[:60])
print("OK")
