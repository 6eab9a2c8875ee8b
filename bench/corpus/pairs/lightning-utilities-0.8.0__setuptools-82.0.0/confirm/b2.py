# lightning_utilities/install/requirements.py line 9 (from pkg_resources import Requirement, yield_lines):
# the module imported under a bare parent package (lightning_utilities/__init__ fails first, b1),
# then load_requirements on a small requirements file
import os, sys, tempfile, types, importlib.util
spec = importlib.util.find_spec("lightning_utilities")
pkg = types.ModuleType("lightning_utilities"); pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["lightning_utilities"] = pkg
sub = types.ModuleType("lightning_utilities.install"); sub.__path__ = [os.path.join(pkg.__path__[0], "install")]
sys.modules["lightning_utilities.install"] = sub
from lightning_utilities.install.requirements import load_requirements
d = tempfile.mkdtemp()
open(os.path.join(d, "base.txt"), "w").write("numpy>=1.20, <2.0  # strict\npackaging\n")
print(load_requirements(d, "base.txt"))
print("OK")
