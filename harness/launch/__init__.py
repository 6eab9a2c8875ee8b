"""``harness run``'s launch: the one path from a step to detached runs, on one host or several.

:mod:`~harness.launch.start` (``start_run``: select the hosts, resolve, review, preflight,
start, launch -- the only caller of ``remote.launch`` with :mod:`~harness.launch.ray`),
:mod:`~harness.launch.nodes` (``Node``, ``Host``, ``Launch`` and the ``Spread`` hooks),
:mod:`~harness.launch.spread` (a ``Spread`` per kind: single, shard, torchrun, ray),
:mod:`~harness.launch.ray` (the Ray cluster a run owns), :mod:`~harness.launch.needs` (the
services a step needs, ready before it launches) and :mod:`~harness.launch.events` (what the
launch tells, host-tagged; :mod:`harness.views.launch` renders them). It stands on
:mod:`harness.runs` (resolving a step, the runs probe) and :mod:`harness.group` (fan-out,
sameness, the group review); nothing below imports it.
"""
