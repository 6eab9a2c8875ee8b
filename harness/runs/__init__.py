"""``harness run`` / ``runs`` / ``logs`` / ``stop``: pipeline steps that outlive the SSH link.

The pieces, each with one job:

* :mod:`~harness.runs.steps` (the models), :mod:`~harness.runs.pipeline` (``pipeline.toml``
  -> frozen steps; errors name ``file:line:key``), :mod:`~harness.runs.resolve` (parameters
  substituted into one step's argv, cwd, env), :mod:`~harness.runs.describe` (a step as it
  would launch, for the review) -- pure.
* :mod:`~harness.runs.remote` -- the only caller of the target: the ``probes/runs/runs.py``
  operations (preflight facts, launch, list, stop) through :func:`harness.probe_runner.run_probe`.
* :mod:`~harness.runs.stream` -- the log from an offset (the target's ``stream()``: a pipe,
  an SSH channel, or the kept connection's relay), reconnecting after a dropped link, with a
  byte-exact local copy.
* :mod:`~harness.runs.decode`, :mod:`~harness.runs.phases`, :mod:`~harness.runs.failure`,
  :mod:`~harness.runs.state`, :mod:`~harness.runs.lifecycle`, :mod:`~harness.runs.preflight`,
  :mod:`~harness.runs.smoke`, :mod:`~harness.runs.needs` -- pure decisions, table-tested.
* :mod:`~harness.runs.serve` (``check --step``: a step's ``vllm serve`` arguments against the
  target's vLLM).
* The launch itself, on one target or several, with its gates, is :mod:`harness.launch` (above
  this package); here: :mod:`~harness.runs.attach` (follow a run to its end; Ctrl-C detaches),
  :mod:`~harness.runs.commands` (``runs``, ``logs``, ``stop``) over
  :mod:`~harness.runs.context`; :mod:`harness.views.launch` and :mod:`harness.views.runs`
  render, :mod:`harness.cli.screen` shows a followed run live; :mod:`harness.cli.runs`
  registers the Typer commands.
"""
