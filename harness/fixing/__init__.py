"""``harness check --fix``: write the patch for the breaks whose fix is mechanical.

Reading order: :mod:`~harness.fixing.model` (facts, edits, decisions), the rules in
:mod:`~harness.fixing.rules` (one module per fix kind, each a pure decision from a finding and
the two callee versions), :mod:`~harness.fixing.cst` (the edits, made with LibCST so that all
else stays byte-identical), :mod:`~harness.fixing.run` (the use case: series state, check,
facts, edits, re-check, the patch).
"""
