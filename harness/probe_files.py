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


#: The run program: ``supervisor.py`` and the probe modules it imports, copied side by side
#: into every run directory (it runs from there, by its path, for as long as the run exists).
PROGRAM = (
    "supervisor.py", "_rundir.py", "_follow.py", "_verify.py", "_proctree.py", "_stop.py",
    "_service.py", "_pin.py", "_ports.py", "_fill.py",
)  # fmt: skip


def program_sources() -> dict[str, str]:
    """The run program's files (``probes/runs/``), by their name in the run directory."""
    folder = probes_dir() / "runs"
    return {name: (folder / name).read_text(encoding="utf-8") for name in PROGRAM}


def verifier_names() -> list[str]:
    """harness's output checks (``probes/verifiers/*.py``), by file name."""
    return sorted(f.name for f in (probes_dir() / "verifiers").glob("*.py"))


def verifier_sources() -> dict[str, str]:
    """harness's output checks, written into a run directory whose step uses them
    (:func:`uses_verifiers`): ``{verifiers}`` names that copy."""
    folder = probes_dir() / "verifiers"
    return {name: (folder / name).read_text(encoding="utf-8") for name in verifier_names()}
