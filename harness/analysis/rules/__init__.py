"""``harness check`` rules that are modules of their own; each is ``run(checker)``.

They are registered, with the Checker's built-in ones, in ``harness.analysis.check.RULES``.
"""
