"""Where the probe programs live on the laptop (``probes/`` in a checkout, ``harness/_probes``
in an installed wheel), and every way one of their files leaves for the target: a probe's
modules (shipped through ``_boot.py``), the probe worker, the run program and harness's output
checks (copied into a run directory), the smoke hook, the early follower, the disk count. The
one module that reads them (``tests/unit/test_structure.py``), so what the target runs is
always found here.

A bottom-floor module (it imports only :mod:`harness.errors`), so both the code that ships a
probe (:mod:`harness.probe_runner`) and a target that keeps a probe worker of its own
(:mod:`harness.targets.zygote`) read the same files without a target importing up; and the
bytecode ``__pycache__`` keeps for them (:func:`kept_code`).
"""

from __future__ import annotations

from functools import cache
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
    "_service.py", "_pin.py", "_ports.py", "_fill.py", "_metrics.py",
)  # fmt: skip


def source(rel: str) -> str:
    """The text of ``probes/REL`` (read each time: a run directory's copy is of now)."""
    return (probes_dir() / rel).read_text(encoding="utf-8")


def module_path(module: str) -> Path:
    """The file of a dotted probe module (a package: its ``__init__.py``)."""
    folder = probes_dir().joinpath(*module.split(".")[1:])
    return folder / "__init__.py" if folder.is_dir() else folder.with_suffix(".py")


@cache
def module_source(module: str) -> str:
    """A probe module's text, as :func:`harness.probe_runner.build_payload` ships it."""
    return module_path(module).read_text(encoding="utf-8")


@cache
def boot_source() -> str:
    """``_boot.py``: what the target's Python runs with ``-c``, the probe's modules on stdin."""
    return source("_boot.py")


def zygote_source() -> str:
    """``zygote.py``: the probe worker a kept connection starts (forks one child per probe)."""
    return source("zygote.py")


def smoke_hook_source() -> str:
    """``runs/smoke_hook.py``: a ``--smoke`` run's ``sitecustomize.py``."""
    return source("runs/smoke_hook.py")


def await_source() -> str:
    """``runs/_await.py``: the follower started while a run is being launched."""
    return source("runs/_await.py")


def disk_budget_source() -> str:
    """``verifiers/_disk_budget.py``: a step's disk count, run by the step's own Python."""
    return source("verifiers/_disk_budget.py")


def program_sources() -> dict[str, str]:
    """The run program's files (``probes/runs/``), by their name in the run directory."""
    return {name: source(f"runs/{name}") for name in PROGRAM}


def verifier_names() -> list[str]:
    """harness's output checks (``probes/verifiers/*.py``), by file name."""
    return sorted(f.name for f in (probes_dir() / "verifiers").glob("*.py"))


def verifier_sources() -> dict[str, str]:
    """harness's output checks, written into a run directory whose step uses them
    (:func:`harness.runs.target.remote.uses_verifiers`): ``{verifiers}`` names that copy."""
    return {name: source(f"verifiers/{name}") for name in verifier_names()}


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
