# lightning-utilities 0.8.0: import lightning_utilities -> core/imports.py line 13 (import pkg_resources);
# the control also runs compare_version (lines 70/77) and RequirementCache (line 116)
import operator
import lightning_utilities
from lightning_utilities.core.imports import compare_version, RequirementCache
print(compare_version("packaging", operator.ge, "20.0"), bool(RequirementCache("packaging>=20.0")))
print("OK")
