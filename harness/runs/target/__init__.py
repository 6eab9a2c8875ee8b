"""The target's side of a run: the runs probe's operations (:mod:`.remote`), where runs live
and every wait (:mod:`.context`, :mod:`.timings`), the preflight's verdicts
(:mod:`.preflight`), a step's disk budget (:mod:`.disk`), a step as it would launch
(:mod:`.describe`), ``check --step`` (:mod:`.step_check`). Imports ``runs/record`` and
``runs/pipeline``."""
