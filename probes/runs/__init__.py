"""Detached runs: the run program copied into each run directory (``supervisor.py`` and the
modules it imports: ``harness.probe_files.PROGRAM``), which starts the step, waits for it,
checks its output and stops its services; the ``runs`` probe (preflight facts, launch, list,
stop); and ``smoke_hook.py``, the start-up hook of a ``--smoke`` run."""
