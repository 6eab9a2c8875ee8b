"""Where the probe programs live on the laptop: ``probes/`` in a checkout, ``harness/_probes``
in an installed wheel.

A bottom-floor module (it imports only :mod:`harness.errors`), so both the code that ships a
probe (:mod:`harness.probe_runner`) and a target that keeps a probe worker of its own
(:mod:`harness.targets.zygote`) read the same files without a target importing up; and the
bytecode ``__pycache__`` keeps for them (:func:`kept_code`).
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import TargetError


def probes_dir() -> Path:
    """``harness/_probes`` in an installed wheel, the repo's ``probes/`` in a checkout."""
    here = Path(__file__).resolve().parent
    for cand in (here / "_probes", here.parent / "probes"):
        if (cand / "_boot.py").is_file():
            return cand
    raise TargetError(
        "harness is installed without its probes/ folder", "reinstall harness (pip install -e .)"
    )


def kept_code(source: str) -> bytes | None:
    """The marshalled code in ``source``'s ``__pycache__`` entry when it is this Python's and
    stamped with the source's present mtime and size (what the import system would load): a
    compiled payload ships it as is, with no load and re-dump; None: compile it."""
    import importlib.util
    import os

    try:
        st = os.stat(source)
        with open(importlib.util.cache_from_source(source), "rb") as f:
            data = f.read()
    except (OSError, NotImplementedError):
        return None
    head = data[:16]
    if (
        len(head) < 16
        or head[:4] != importlib.util.MAGIC_NUMBER
        or int.from_bytes(head[4:8], "little") != 0  # a timestamp pyc, not a hash-based one
        or int.from_bytes(head[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(head[12:16], "little") != st.st_size & 0xFFFFFFFF
    ):
        return None
    return data[16:]
