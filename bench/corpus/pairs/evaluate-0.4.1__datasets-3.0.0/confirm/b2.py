# evaluate 0.4.1 utils/file_utils.py line 186: download_config.ignore_url_params (cached_path stops
# at line 185
# first under datasets 3.0.0), so the exact expression is run with the same receiver type
# (datasets.DownloadConfig).
from evaluate.utils import file_utils

download_config = file_utils.DownloadConfig(local_files_only=True)
print(download_config.ignore_url_params)
print("OK")
