"""Where the probe programs live on the laptop: ``probes/`` in a checkout, ``harness/_probes``
in an installed wheel.

A bottom-floor module (it imports only :mod:`harness.errors`), so both the code that ships a
probe (:mod:`harness.probe_runner`) and a target that keeps a probe worker of its own
(:mod:`harness.targets.zygote`) read the same files without a target importing up.
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
