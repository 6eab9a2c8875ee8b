"""Several hosts as one target: groups from hosts.toml, per-host results, sameness, fan-out.

``-t gpu1,gpu2`` or ``-t nodes`` (a ``[groups]`` entry) names several hosts. Commands with a
meaning across hosts (``hosts --check``, ``report``, ``apply-patches``, ``revert-patches``,
``run``, ``runs``, ``logs``, ``stop``) have their own implementation; every other command runs
once per host, concurrently, in-process, and reports per host (:mod:`harness.cli.across`).
``harness run`` on one target or several is :func:`harness.group.start.start_run`, each
``spread`` a :class:`harness.group.spread.Spread`.
"""
