"""``harness run`` / ``runs`` / ``logs`` / ``stop``: pipeline steps that outlive the SSH link.

The pieces, each with one job:

* :mod:`~harness.runs.pipeline` -- ``pipeline.toml`` -> frozen steps; parameters substituted
  (pure, errors name ``file:line:key``).
* :mod:`~harness.runs.remote` -- the only caller of the target: the ``probes/supervisor.py``
  operations (preflight facts, launch, list, stop) through :func:`harness.probing.run_probe`.
* :mod:`~harness.runs.stream` -- the log as a byte stream from an offset (a raw SSH channel or
  a local pipe), reconnecting after a dropped link, with a byte-exact local copy.
* :mod:`~harness.runs.decode`, :mod:`~harness.runs.phases`, :mod:`~harness.runs.failure`,
  :mod:`~harness.runs.state`, :mod:`~harness.runs.preflight` -- pure decisions, table-tested
  (``preflight`` also holds the hook into :mod:`harness.patching`).
* :mod:`~harness.runs.launch` (``run``), :mod:`~harness.runs.attach` (follow a run to its
  end; Ctrl-C detaches), :mod:`~harness.runs.commands` (``runs``, ``logs``, ``stop``) wire a
  command together over :mod:`~harness.runs.context`; :mod:`~harness.views.runs` renders;
  :mod:`harness.cli.runs` registers the Typer commands.
"""
