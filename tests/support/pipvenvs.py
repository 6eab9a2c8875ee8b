"""Venvs of real packages with their dependencies, built once with pip and cached.

The seed venv (``wheels.py``) holds exactly the wheels under analysis, ``--no-deps``: nothing in
it is imported. Some tests must import the real thing -- transformers reading a config through
smoke mode's hook, vLLM 0.20.2's config and scheduler classes on the CPU -- so they need a venv
with the dependency closure. It is pinned (``tests/support/*.txt``), built once per pin set and
Python under the test cache, and published atomically like the seed venv. Tests never write to
it: :func:`overlay` gives a private, writable venv on top (one ``.pth`` line), which is where a
patch series can be applied.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.wheels import WheelsError, _base_python, _locked, _run, cache_root, ensure_wheel

HERE = Path(__file__).resolve().parent
_MARKER = ".harness-pipvenv.json"


@dataclass(frozen=True)
class PipVenv:
    root: Path
    python: Path
    site_packages: Path


def _site(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(out.stdout.strip())


def ensure_pip_venv(
    name: str,
    requirements: Path,
    no_deps: Sequence[Path] = (),
    first: Sequence[str] = (),
    check: str = "",
) -> PipVenv:
    """The cached venv ``name``: ``first`` (e.g. torch, from the machine's own wheel), then the
    pinned ``requirements`` file with ``--no-deps`` (the pins are the closure), then the
    ``no_deps`` wheels (e.g. vLLM, whose own pins would pull a CUDA torch). ``check`` is Python
    run in it before it is published: a closure that misses a module fails here, naming it,
    instead of as some later symptom in a test (vLLM reports a missing import of its model code
    as "failed to be inspected")."""
    text = "\n".join([sys.version, _base_python(), *first, requirements.read_text(),
                      *sorted(p.name for p in no_deps), check])  # fmt: skip
    key = f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
    venvs = cache_root() / "pipvenvs"
    final = venvs / key
    if (final / _MARKER).is_file():
        return PipVenv(final, final / "bin" / "python", _site(final / "bin" / "python"))
    venvs.mkdir(parents=True, exist_ok=True)
    with _locked(venvs / ".lock"):
        if not (final / _MARKER).is_file():
            shutil.rmtree(final, ignore_errors=True)
            for stale in venvs.glob(f".build-{name}-*"):
                shutil.rmtree(stale, ignore_errors=True)
            build = Path(tempfile.mkdtemp(prefix=f".build-{name}-", dir=venvs))
            try:
                # built where it will live: venvs record their own path in bin/ and pyvenv.cfg
                shutil.rmtree(build)
                _run([sys.executable, "-m", "venv", str(final)], f"creating the {name} venv")
                pip = [str(final / "bin" / "python"), "-m", "pip", "install", "-q",
                       "--disable-pip-version-check", "--no-compile"]  # fmt: skip
                if first:
                    _run([*pip, *first], f"installing {' '.join(first)}")
                _run(
                    [*pip, "--no-deps", "-r", str(requirements)], f"installing {requirements.name}"
                )
                if no_deps:
                    _run([*pip, "--no-deps", *map(str, no_deps)], "installing the wheels")
                if check:
                    _check_imports(final / "bin" / "python", check, requirements)
                (final / _MARKER).write_text(json.dumps({"key": key}) + "\n")
            except BaseException:
                shutil.rmtree(final, ignore_errors=True)
                raise
    return PipVenv(final, final / "bin" / "python", _site(final / "bin" / "python"))


def _check_imports(python: Path, code: str, requirements: Path) -> None:
    env = {**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"}
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env=env)  # fmt: skip
    if proc.returncode != 0:
        missing = re.findall(r"No module named '([^']+)'", proc.stderr)
        what = f"it lacks {missing[0]!r}: add it to {requirements.name}" if missing else "it fails"
        raise WheelsError(
            f"the venv built from {requirements.name} cannot import what the tests use ({what})\n"
            + root_cause(proc.stderr)
        )


def root_cause(stderr: str, tail: int = 3000) -> str:
    """A failure's text that keeps its cause: the first error lines (a child process's
    traceback, such as vLLM's model inspection, comes long before the error that reports it)
    and then the tail."""
    causes = [line for line in stderr.splitlines()
              if re.match(r"\s*\w+(\.\w+)*(Error|Exception): ", line)][:5]  # fmt: skip
    end = stderr[-tail:]
    head = "\n".join(c for c in causes if c not in end)
    return (f"first errors:\n{head}\n...\n" if head else "") + end


def overlay(base: PipVenv, dest: Path, wheels: Sequence[Path] = ()) -> PipVenv:
    """A private venv seeing ``base``'s packages through one ``.pth`` line, with ``wheels``
    installed into it (they shadow ``base``'s: its own site-packages comes first)."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(dest)], "creating an overlay venv")
    python = dest / "bin" / "python"
    site = _site(python)
    (site / "_base_packages.pth").write_text(f"{base.site_packages}\n")
    if wheels:
        _run([str(base.python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
              "--no-compile", "--disable-pip-version-check", "--target", str(site),
              *map(str, wheels)], "installing into the overlay")  # fmt: skip
        # pip --target writes no INSTALLER... but RECORD is there: harness checks it
    return PipVenv(dest, python, site)


def built_or_fail(fn, *args, **kw):  # type: ignore[no-untyped-def]
    try:
        return fn(*args, **kw)
    except WheelsError as exc:
        pytest.fail(str(exc), pytrace=False)


TRANSFORMERS_REQS = HERE / "transformers-4.57.6.txt"
VLLM_CPU_REQS = HERE / "vllm-0.20.2-cpu.txt"
RAY_REQS = HERE / "ray-2.52.1.txt"
VERIFY_CPU_REQS = HERE / "verify-cpu.txt"
TORCH_CPU = "torch==2.13.0"
# What the vLLM CPU venv must import: the classes the tests build, and the model code vLLM's
# registry inspects in a child process when a ModelConfig names a Llama
VLLM_CPU_CHECK = """
import vllm.platforms as platforms
from vllm.platforms.cpu import CpuPlatform
platforms._current_platform = CpuPlatform()
from vllm.config import ModelConfig, VllmConfig
from vllm.v1.core.sched.scheduler import Scheduler
from vllm.model_executor.models.llama import LlamaForCausalLM
"""


def vllm_cpu_venv() -> PipVenv:
    """torch 2.13 CPU + vLLM 0.20.2 (--no-deps) + the pinned closure, import-checked."""
    wheel = built_or_fail(ensure_wheel, "vllm==0.20.2")
    return built_or_fail(
        ensure_pip_venv, "vllm-cpu", VLLM_CPU_REQS, [wheel], [TORCH_CPU], VLLM_CPU_CHECK
    )  # the CPU build this kind of machine keeps on disk (pip finds it)


def verify_cpu_venv() -> PipVenv:
    """torch 2.13 CPU + transformers 5.17 + datasets: what the extraction check runs with."""
    check = "import torch, transformers, datasets, safetensors"
    return built_or_fail(ensure_pip_venv, "verify-cpu", VERIFY_CPU_REQS, [], [TORCH_CPU], check)
