"""``harness run`` / ``runs`` / ``logs`` / ``stop``: pipeline steps that outlive the SSH link.

Four folders by job, each importing only from those listed before it (the structure test's
``RUNS_FLOORS``):

* :mod:`~harness.runs.record` -- a run's state and record: ``run.json`` and the other files of a
  run directory, typed; the state, exit code and label; output checks' words. Pure.
* :mod:`~harness.runs.pipeline` -- the pipeline file: ``pipeline.toml`` -> frozen steps, one step
  resolved for a launch, what it requires, ``--smoke``'s plan. Pure.
* :mod:`~harness.runs.target` -- the target's side: the runs probe (the only caller of the
  target here), where runs live, the preflight, the disk budget, a step described as it would
  launch, ``check --step``.
* :mod:`~harness.runs.follow` -- following: a run's log as a stream, decoded, its phases and
  failure read; a service's start; ``runs`` / ``logs`` / ``stop`` as use cases.

The launch itself, on one target or several, with its gates, is :mod:`harness.launch` (above
this package); :mod:`harness.views.launch` and :mod:`harness.views.runs` render,
:mod:`harness.cli.screen` shows a followed run live; :mod:`harness.cli.runs` registers the
Typer commands.
"""
