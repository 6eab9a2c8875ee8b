"""``harness check`` rules, one module each declaring its ``RULE`` (see ``rules.base``).

Registered in order in ``harness.analysis.checker.RULES``: imports, calls (with forwards),
names (attributes, unknown callees, installs on known classes), overrides, drift (api_drift,
returns, defaults, installs on likely classes).
"""
