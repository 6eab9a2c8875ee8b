"""The three checkers the check benches compare -- `harness check`, mypy, pyright -- run on the
same sources (a caller and its callee unpacked from their wheels, nothing else) and read into one
shape: (file relative to the caller's root, line) -> the errors' messages. Shared by
check_classes_bench.py (issue 34's classes) and corpus_bench.py (issue 46's corpus)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

Where = tuple[str, int]
Errors = dict[Where, list[str]]  # (file relative to the caller's root, line) -> messages


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    return time.perf_counter() - start, cp.stdout


def roots(spec: str) -> list[str]:
    """The unpacked roots of a pypi: spec's wheels, the caller's first (downloaded once)."""
    from harness.targets.pypi import PypiTarget

    return PypiTarget(spec).probe_paths()


def venv_for(spec: str, home: Path) -> Path:
    """A venv holding ``spec``'s pins, installed ``--no-deps`` (made once, under ``home``): for
    a pair whose caller is published as an sdist only, which the ``pypi:`` target does not read
    -- checked then as a user checks an environment, ``-t venv:PATH``."""
    venv = home / hashlib.sha256(spec.encode()).hexdigest()[:16]
    if not (venv / ".complete").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        pins = spec.split(",")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
             "--disable-pip-version-check", "--target", str(site_packages(venv)), *pins],
            check=True, capture_output=True,
        )  # fmt: skip
        (venv / ".complete").write_text(spec)
    return venv


def site_packages(venv: Path) -> Path:
    v = sys.version_info
    return venv / "lib" / f"python{v.major}.{v.minor}" / "site-packages"


def harness_errors(
    caller: str, target: str, args: tuple[str, ...], env: dict[str, str], tmp: Path
) -> tuple[float, Errors]:
    """``harness check`` on ``target`` (``pypi:...`` or ``venv:PATH``), its errors by place."""
    argv = [sys.executable, "-m", "harness", "check", caller, "-t", target]
    t, out = timed([*argv, *args, "--json"], env, tmp)
    errs: Errors = {}
    try:
        findings = json.loads(out)["findings"]
    except (ValueError, KeyError):
        findings = []
    for f in findings:
        if f["severity"] == "error" and f.get("file"):
            errs.setdefault((f["file"], f["line"]), []).append(f"{f['category']}: {f['message']}")
    return t, errs


def mypy_errors(
    package: str, paths: list[str], tmp: Path, files: tuple[str, ...] = ()
) -> tuple[float, Errors] | None:
    """mypy on the package, or on ``files`` alone (relative to the caller's root; the imports
    they reach are still read, silently)."""
    exe = shutil.which("mypy") or str(Path(sys.executable).parent / "mypy")
    if not Path(exe).exists():
        return None
    root = paths[0]
    env = {**os.environ, "MYPYPATH": os.pathsep.join(paths)}
    argv = [exe, "--ignore-missing-imports", "--follow-imports=silent", "--no-incremental"]
    argv += ["--cache-dir", str(tmp / "mypy-cache"), "--python-version", "3.11"]
    what = [str(Path(root, f)) for f in files] if files else ["-p", package]
    t, out = timed([*argv, *what, "--no-error-summary", "--show-absolute-path"], env, tmp)
    errs: Errors = {}
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[2].strip() == "error" and parts[0].startswith(root):
            where = (os.path.relpath(parts[0], root), int(parts[1]))
            errs.setdefault(where, []).append(parts[3].strip())
    return t, errs


def pyright_errors(
    package: str, paths: list[str], tmp: Path, files: tuple[str, ...] = ()
) -> tuple[float, Errors] | None:
    """pyright on the package, or on ``files`` alone (relative to the caller's root)."""
    exe = shutil.which("pyright") or str(Path(sys.executable).parent / "pyright")
    if not Path(exe).exists():
        return None
    root = paths[0]
    cfg = tmp / "pyrightconfig.json"
    config = {
        # pyright ignores an absolute include, and auto-excludes **/.* (~/.cache) unless told
        "include": [os.path.relpath(Path(root, f), tmp) for f in (files or (package,))],
        "exclude": ["**/__pycache__"],
        "extraPaths": paths,
        "typeCheckingMode": "basic",
        "pythonVersion": "3.11",
        # as mypy's --ignore-missing-imports: what the pair does not install is not an error
        "reportMissingImports": "none",
        "reportMissingModuleSource": "none",
    }
    cfg.write_text(json.dumps(config))
    t, out = timed([exe, "--outputjson", "-p", str(cfg)], dict(os.environ), tmp)
    try:
        diags = json.loads(out).get("generalDiagnostics", [])
    except ValueError:
        return None
    errs: Errors = {}
    for d in diags:
        if d.get("severity") == "error" and d["file"].startswith(root):
            where = (os.path.relpath(d["file"], root), d["range"]["start"]["line"] + 1)
            errs.setdefault(where, []).append(d["message"].splitlines()[0])
    return t, errs


def count(errs: Errors) -> int:
    return sum(len(v) for v in errs.values())
