"""Handwritten caller/callee pairs for ``check --fix`` (and ``check``: narrowapp), as real
wheels in a private cache.

``tests/fixtures/fixpairs/NAME-VERSION/`` holds a package and its ``METADATA`` (a caller's
``Requires-Dist: lib==1.0.0`` is its baseline). Each folder becomes a real wheel with a RECORD,
placed in a harness cache's ``wheels/``, so ``-t pypi:app==0.1.0,lib==2.0.0`` reads them the
way it reads PyPI's -- unpacked, never imported, no index needed.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

FIXPAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "fixpairs"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(folder: Path, out: Path) -> Path:
    name, version = folder.name.rsplit("-", 1)
    info = f"{name}-{version}.dist-info"
    files = {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "METADATA" and "__pycache__" not in p.parts
    }
    files[f"{info}/METADATA"] = (folder / "METADATA").read_bytes()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    path = out / f"{name}-{version}-py3-none-any.whl"
    rows = [f"{n},{_hash(d)},{len(d)}" for n, d in files.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(path, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
        zf.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return path


@pytest.fixture(scope="session")
def fixpairs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A harness cache whose wheels/ holds every fixture pair (built once per session)."""
    root = tmp_path_factory.mktemp("fixpairs-cache")
    (root / "wheels").mkdir()
    for folder in sorted(FIXPAIRS.iterdir()):
        if folder.is_dir():
            build_wheel(folder, root / "wheels")
    return root


@pytest.fixture
def fixpairs_env(fixpairs_cache: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a ``harness`` run over the fixture pairs' cache: no hosts, an empty
    HOME, no kept connection."""
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    (tmp_path / "home").mkdir()
    return {
        "HARNESS_CACHE": str(fixpairs_cache),
        "HARNESS_HOSTS": str(hosts),
        "HOME": str(tmp_path / "home"),
        "HARNESS_SSH_PERSIST": "0",
    }


def install(venv: Path, wheels: list[Path]) -> Path:
    """A venv (no pip) with ``wheels`` unpacked into its site-packages, RECORD and all --
    what pip does for a pure wheel, without an index or a network. Returns site-packages."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    for w in wheels:
        with zipfile.ZipFile(w) as zf:
            zf.extractall(site)
    return site
