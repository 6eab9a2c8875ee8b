"""Where Python packages live: the Target interface (:mod:`.base`), the kinds
(:mod:`.local`, :mod:`.pypi`, :mod:`.ssh`) and the registry that opens ``-t SPEC`` and
hosts.toml entries (:mod:`.registry`).

Only this package talks to the outside world (processes, files, SSH, pip).
"""
