"""``harness check`` rules, one module each, every one ``run(checker)`` adding findings.

Registered in order in ``harness.analysis.check.RULES``: imports, calls, forwards,
attributes, overrides, api_drift, returns (behaviour), defaults, installs (patched-in methods).
"""
