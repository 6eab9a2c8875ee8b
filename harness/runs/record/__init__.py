"""A run's state and record (pure): ``run.json`` and its typed parts (:mod:`.models`,
:mod:`.parts`, :mod:`.written`), a run's state, exit code and label (:mod:`.lifecycle`,
:mod:`.state`), an output check's words (:mod:`.verification`), what ``stop`` did
(:mod:`.stopped`). The lowest of ``runs/``: it imports nothing else of it."""
