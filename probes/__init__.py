"""Stdlib-only programs that the *target's* Python runs.

They never import the packages they inspect: they find files on the import path and parse them
with ``ast`` under the very grammar that will run them. The controller ships them as source on
stdin (see ``_boot.py``) together with JSON arguments, and reads one JSON envelope back; what
a probe ships is its imports' closure (``harness/probe_modules.py``).

The map, by job:

- ``signatures/``: reading a definition without importing it (the AST index, how a name
  resolves, a function's or class's parameters), and the probes built on it (``signatures``,
  ``api``, ``locate``, ``serveargs``).
- ``callsites/``: the callers' side, every call, attribute read and subclass of a callee
  recorded and judged (``callsites``, ``fixscan``).
- ``runs/``: the run program copied into each run directory (``supervisor.py`` and the
  modules it imports) and the ``runs`` probe (preflight, launch, list, stop).
- ``patching/``: patch series applied and reverted as one transaction (``patchops``).
- ``verifiers/``: harness's output checks, copied into a run directory as a folder.
- here: the bootstrap (``_boot.py``), the kept worker (``zygote.py``), the module finder every
  probe uses (``_finder.py``) and the small probes ``facts``, ``live``, ``compiles``.
"""
