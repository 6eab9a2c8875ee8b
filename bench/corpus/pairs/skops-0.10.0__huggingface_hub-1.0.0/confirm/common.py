"""Offline set-up shared by the confirm scripts: a valid skops repo folder built with skops.hub_utils.init."""
import os, pickle, tempfile, warnings
warnings.simplefilter("ignore")
os.environ["HF_HUB_OFFLINE"] = "1"  # nothing leaves the machine: hub calls that bind raise the offline error
import numpy as np
from sklearn.linear_model import LogisticRegression
from skops import hub_utils

def skops_repo():
    X, y = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]), np.array([0, 1, 1, 0])
    model = LogisticRegression().fit(X, y)
    d = tempfile.mkdtemp()
    path = os.path.join(d, "model.pkl")
    pickle.dump(model, open(path, "wb"))
    repo = os.path.join(d, "repo")
    hub_utils.init(model=path, requirements=["scikit-learn"], dst=repo, task="tabular-classification", data=X)
    return repo

def offline_error(e):
    """The hub refused to go online: the call bound and ran up to the network."""
    return type(e).__name__ in ("OfflineModeIsEnabled", "LocalEntryNotFoundError", "ConnectionError", "ConnectError")
