"""Real PyPI packages for the integration tests, downloaded once and cached between runs.

The tests pin complete expected results on the real speculators and vLLM releases, so they
need the real wheels, not hand-made look-alikes. vLLM's wheel is ~500 MB: it is fetched once
into a cache outside the repository (``$HARNESS_TEST_CACHE``, else ``~/.cache/harness-tests``)
and every later run reuses it. The same goes for the venv that stands in for the GPU box's
environment: installing ~1.3 GB of files takes long enough that it is built once per set of
wheels and Python, and published atomically so an interrupted build is never reused.

Everything here is plain functions (usable from ``bench/`` scripts too) plus thin pytest
fixtures that turn failures into one clear ``pytest.fail`` message.

Layout of the cache::

    CACHE/wheels/*.whl             the downloaded wheels (pip's own file names)
    CACHE/wheels/.lock             held while checking or downloading
    CACHE/venvs/KEY/               a complete venv; KEY hashes wheel names + Python
    CACHE/venvs/KEY/.harness-venv.json   marker, written last before publishing
    CACHE/venvs/.lock              held while checking or building
"""

from __future__ import annotations

import base64
import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

SPECULATORS = "speculators==0.3.0"
VLLM_OLD = "vllm==0.11.0"
VLLM_NEW = "vllm==0.16.0"
#: Every wheel the ``wheels`` fixture provides, keyed by these exact strings.
REQUIREMENTS: tuple[str, ...] = (SPECULATORS, VLLM_OLD, VLLM_NEW)
#: What the "GPU container" stand-in has installed.
SEED_REQUIREMENTS: tuple[str, ...] = (SPECULATORS, VLLM_NEW)

#: Bump when the way a cached venv is built changes, so old builds are not reused.
_VENV_SCHEMA = 1
_MARKER = ".harness-venv.json"

# Captured at import time on purpose: other fixtures monkeypatch HOME to keep tests away from
# the developer's ~/.ssh, and the cache must not follow HOME into a throw-away directory (that
# would re-download 1 GB per test).
_DEFAULT_CACHE_ROOT = Path(os.path.expanduser("~")) / ".cache" / "harness-tests"


def cache_root() -> Path:
    """Return the cache directory: ``$HARNESS_TEST_CACHE`` if set, else the real home's cache."""
    override = os.environ.get("HARNESS_TEST_CACHE")
    return Path(override).expanduser() if override else _DEFAULT_CACHE_ROOT


class WheelsError(RuntimeError):
    """A wheel could not be downloaded or a venv could not be built."""


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` so two pytest processes never race.

    The lock dies with the process, so a killed run never leaves a stale lock behind.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for {lock_path} (another test run holds it)", file=sys.stderr)
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ---------------------------------------------------------------------------------------------
# Wheels
# ---------------------------------------------------------------------------------------------


def _pinned(requirement: str) -> tuple[str, Version]:
    """Split ``NAME==VERSION`` into a canonical name and a version; anything else is a bug."""
    req = Requirement(requirement)
    specs = list(req.specifier)
    if len(specs) != 1 or specs[0].operator != "==":
        raise ValueError(f"{requirement!r}: expected an exact pin NAME==VERSION")
    return canonicalize_name(req.name), Version(specs[0].version)


def _is_complete_wheel(path: Path) -> bool:
    """True if ``path`` opens as a zip with a readable central directory (cheap: no CRCs)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith(".dist-info/METADATA") for n in zf.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def find_cached_wheel(requirement: str, wheel_dir: Path) -> Path | None:
    """Return a complete wheel in ``wheel_dir`` matching ``NAME==VERSION``, or None.

    Matching parses pip's file names (normalized name + version) rather than globbing text,
    so ``Speculators``/``speculators`` and ``0.3``/``0.3.0`` all find the same file.
    """
    name, version = _pinned(requirement)
    for candidate in sorted(wheel_dir.glob("*.whl")):
        try:
            wname, wversion, _build, _tags = parse_wheel_filename(candidate.name)
        except InvalidWheelFilename:
            continue
        if wname == name and wversion == version and _is_complete_wheel(candidate):
            return candidate
    return None


def _download(requirement: str, wheel_dir: Path) -> Path:
    """Run ``pip download`` for one pinned requirement and move the wheel into ``wheel_dir``.

    pip downloads into a private temp directory first, so a download killed half-way never
    leaves a truncated ``.whl`` where :func:`find_cached_wheel` would look.
    """
    tmp = Path(tempfile.mkdtemp(prefix=".download-", dir=wheel_dir))
    try:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "--progress-bar", "off", "-d", str(tmp), requirement,
        ]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise WheelsError(
                f"could not download {requirement} (pip exit {proc.returncode}).\n"
                f"command: {' '.join(cmd)}\n{tail}\n"
                f"hint: these tests need the real wheel from PyPI; check network/pip.conf, "
                f"or put the wheel into {wheel_dir} by hand."
            )
        found = find_cached_wheel(requirement, tmp)
        if found is None:
            raise WheelsError(f"pip download {requirement} succeeded but left no wheel in {tmp}")
        final = wheel_dir / found.name
        os.replace(found, final)
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_wheel(requirement: str, root: Path | None = None) -> Path:
    """Return the cached wheel for ``NAME==VERSION``, downloading it only when missing."""
    wheel_dir = (root or cache_root()) / "wheels"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    found = find_cached_wheel(requirement, wheel_dir)
    if found is not None:  # fast path without the lock: files only ever appear complete
        return found
    with _locked(wheel_dir / ".lock"):
        found = find_cached_wheel(requirement, wheel_dir)  # another process may have won
        return found if found is not None else _download(requirement, wheel_dir)


@dataclass(frozen=True)
class Wheels(Mapping[str, Path]):
    """The real wheels, keyed by their requirement string (``"vllm==0.16.0"`` → Path)."""

    paths: Mapping[str, Path]

    def __getitem__(self, requirement: str) -> Path:
        return self.paths[requirement]

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def ensure_wheels(requirements: Sequence[str] = REQUIREMENTS, root: Path | None = None) -> Wheels:
    """Fetch (or reuse) every wheel in ``requirements``."""
    return Wheels({req: ensure_wheel(req, root) for req in requirements})


# ---------------------------------------------------------------------------------------------
# Venvs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedVenv:
    """A venv with real packages installed: the stand-in for the GPU box's environment."""

    root: Path
    python: Path
    site_packages: Path


def _base_python() -> str:
    """The interpreter a new venv will point at (``sys.executable`` may itself be a venv's)."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def venv_key(wheels: Sequence[Path]) -> str:
    """Cache key of a venv: which wheels, on which Python, built which way."""
    text = "\n".join(
        [f"schema={_VENV_SCHEMA}", sys.version, _base_python(), *sorted(w.name for w in wheels)]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _run(cmd: Sequence[str], what: str) -> None:
    """Run a build step; on failure raise with its output, which is the only useful clue."""
    proc = subprocess.run(list(cmd), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise WheelsError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def _build_venv(dest: Path, wheels: Sequence[Path]) -> Path:
    """Create a venv at ``dest`` and install ``wheels`` offline; return site-packages."""
    _run([sys.executable, "-m", "venv", str(dest)], "creating a venv")
    python = dest / "bin" / "python"
    _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
         "--disable-pip-version-check", *map(str, wheels)],
        "installing wheels",
    )  # fmt: skip
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(out.stdout.strip())


def _record_hash(data: bytes) -> str:
    """The ``sha256=...`` form pip writes into RECORD (urlsafe base64, no padding)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def relocate_venv(root: Path, old: Path, new: Path) -> list[Path]:
    """Make a venv that was built at ``old`` and now lives at ``root`` point at ``new``.

    Venvs record their own absolute path in ``bin/`` (script shebangs, ``activate``) and in
    ``pyvenv.cfg``. ``bin/python`` itself is fine after a move (Python finds its prefix from
    where it runs), but a stale shebang would make ``DEST/bin/pip`` run the *seed's* python
    and install into the seed. The rewritten scripts' RECORD entries get their new hash and
    size, so a copy reads exactly as if pip had installed it in place — this matters because
    harness treats RECORD as the truth about which installed files are pristine.

    Returns:
        The files rewritten.
    """
    old_b, new_b = os.fsencode(old), os.fsencode(new)
    changed: dict[str, bytes] = {}
    candidates = [root / "pyvenv.cfg", *sorted((root / "bin").iterdir())]
    for path in candidates:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old_b in data:
            data = data.replace(old_b, new_b)
            path.write_bytes(data)  # same inode: mode (the +x bit) is kept
            changed[os.path.normpath(path)] = data
    if changed:
        for record in root.glob("lib/python*/site-packages/*.dist-info/RECORD"):
            _fix_record(record, changed)
    return [Path(p) for p in changed]


def _fix_record(record: Path, changed: Mapping[str, bytes]) -> None:
    """Update hash and size of rewritten files listed in one RECORD (paths are relative)."""
    site_packages = record.parent.parent
    text = record.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    dirty = False
    for row in rows:
        if len(row) == 3:
            target = os.path.normpath(site_packages / row[0])
            if target in changed:
                data = changed[target]
                row[1:] = [_record_hash(data), str(len(data))]
                dirty = True
    if dirty:
        out = io.StringIO()
        csv.writer(out, lineterminator="\r\n" if "\r\n" in text else "\n").writerows(rows)
        record.write_text(out.getvalue(), encoding="utf-8")


def _load(root: Path) -> SeedVenv | None:
    """Return the venv at ``root`` if its marker says it is complete and it still runs."""
    try:
        marker = json.loads((root / _MARKER).read_text())
    except (OSError, ValueError):
        return None
    python = root / "bin" / "python"
    if not python.exists():  # the base interpreter behind the symlink is gone
        return None
    return SeedVenv(root=root, python=python, site_packages=root / marker["site_packages"])


def ensure_cached_venv(wheels: Sequence[Path], root: Path | None = None) -> SeedVenv:
    """Return the cached venv with exactly ``wheels`` installed, building it once if needed.

    The venv is built in a temporary sibling directory, relocated (see :func:`relocate_venv`),
    marked complete, and only then ``os.replace``-d into place: a build killed at any point
    leaves only a ``.build-*`` directory, which the next build sweeps away.
    """
    venvs = (root or cache_root()) / "venvs"
    final = venvs / venv_key(wheels)
    found = _load(final)
    if found is not None:
        return found
    with _locked(venvs / ".lock"):
        found = _load(final)
        if found is not None:
            return found
        for stale in venvs.glob(".build-*"):  # leftovers of killed builds; we hold the lock
            shutil.rmtree(stale, ignore_errors=True)
        if final.exists():  # no valid marker: incomplete or broken, never reuse
            shutil.rmtree(final)
        build = Path(tempfile.mkdtemp(prefix=".build-", dir=venvs))
        build.chmod(0o755)  # mkdtemp's 0700 would hide the venv from other (SSH) users
        try:
            started = time.monotonic()
            site_packages = _build_venv(build, wheels)
            relocate_venv(build, build, final)
            marker = {
                "wheels": sorted(w.name for w in wheels),
                "python": sys.version,
                "base_python": _base_python(),
                "site_packages": str(site_packages.relative_to(build)),
                "build_seconds": round(time.monotonic() - started, 1),
            }
            (build / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            os.replace(build, final)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    loaded = _load(final)
    assert loaded is not None, final
    return loaded


def make_venv(dest: Path, wheels: Sequence[Path], root: Path | None = None) -> SeedVenv:
    """Create a private, writable venv at ``dest`` with ``wheels`` installed.

    For tests that mutate a venv (patching). The cached venv for the same wheels is copied
    (built first if needed) instead of installing again: copying is several times faster
    than re-unpacking vLLM's 500 MB wheel (measured on 2 cores: copy + relocate ≈ 5.5 s,
    ``cp -a`` no faster, fresh venv + install ≈ 19-25 s).

    ``shutil.copytree(symlinks=True)`` keeps ``bin/python`` a symlink to the base
    interpreter, so ``DEST/bin/python`` reports ``sys.prefix == DEST``; the few files that
    spell the seed's path are then rewritten by :func:`relocate_venv`. Files are real copies,
    never hard links: a test writing in place must not be able to change the seed.
    """
    seed = ensure_cached_venv(wheels, root)
    dest = Path(os.path.abspath(dest))
    shutil.copytree(seed.root, dest, symlinks=True)
    relocate_venv(dest, seed.root, dest)
    return SeedVenv(
        root=dest,
        python=dest / "bin" / "python",
        site_packages=dest / seed.site_packages.relative_to(seed.root),
    )


# ---------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def wheels() -> Wheels:
    """The real wheels for speculators 0.3.0, vLLM 0.11.0 and vLLM 0.16.0 (cached)."""
    try:
        return ensure_wheels(REQUIREMENTS)
    except WheelsError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def seed_venv(wheels: Wheels) -> SeedVenv:
    """A cached venv with speculators 0.3.0 and vLLM 0.16.0 installed; treat it as read-only."""
    try:
        return ensure_cached_venv([wheels[req] for req in SEED_REQUIREMENTS])
    except WheelsError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def fresh_venv(
    wheels: Wheels, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., SeedVenv]]:
    """Factory for private, writable venvs; call with requirement strings (default: the seed's).

    Each copy is ~1.3 GB, so copies are deleted at teardown instead of being left in pytest's
    retained temp directories.
    """
    made: list[Path] = []

    def factory(*requirements: str) -> SeedVenv:
        reqs = requirements or SEED_REQUIREMENTS
        dest = tmp_path_factory.mktemp("venv") / "venv"
        made.append(dest)
        try:
            return make_venv(dest, [wheels[req] for req in reqs])
        except WheelsError as exc:
            pytest.fail(str(exc), pytrace=False)

    yield factory
    for dest in made:
        shutil.rmtree(dest, ignore_errors=True)
