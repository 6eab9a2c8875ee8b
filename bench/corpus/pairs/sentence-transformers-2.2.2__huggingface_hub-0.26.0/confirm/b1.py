# sentence-transformers 2.2.2 sentence_transformers/util.py executed as a module from its own file
# (no relative
# imports; loading it through the package would stop at SentenceTransformer.py:12 first), then its
# cos_sim helper used: line 17 imports cached_download (called at line 491 in snapshot_download)
import importlib.util
import os
import sys

import torch

root = next(p for p in sys.path if os.path.isdir(os.path.join(p, "sentence_transformers")))
spec = importlib.util.spec_from_file_location(
    "st_util", os.path.join(root, "sentence_transformers", "util.py")
)
util = importlib.util.module_from_spec(spec)
spec.loader.exec_module(util)
print(util.cos_sim(torch.ones(1, 4), torch.ones(2, 4)))
print("OK")
