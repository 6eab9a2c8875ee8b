"""What is about groups of hosts: naming them, fanning a command out, comparing them.

``-t gpu1,gpu2`` or ``-t nodes`` (a ``[groups]`` entry) names several hosts
(:mod:`~harness.group.spec`). :mod:`~harness.group.result` runs one call per host and keeps
one outcome each (``GroupResult``); :mod:`~harness.group.sameness` compares the hosts where a
multi-node run needs them alike; the commands with a meaning across hosts have their group
form here: ``report`` (:mod:`~harness.group.review`), ``apply-patches`` / ``revert-patches``
(:mod:`~harness.group.patches`, all or nothing), ``runs`` / ``stop``
(:mod:`~harness.group.listing`). Every other command runs once per host, in-process
(:mod:`harness.cli.across`). ``harness run`` -- on one target or several -- is not here: it is
:mod:`harness.launch`, which uses these.
"""
