"""``pypi:NAME==VER[,NAME==VER...]`` -- wheels from the package index, unpacked, never imported.

This is the target that needs no GPU box: ``pip download --no-deps`` fetches each wheel (so the
user's pip config, index and proxy apply), we unpack only its Python sources and metadata into a
cache, make them read-only, and the probes read them with this machine's Python -- as that
Python would, unless a ``python==3.12`` pin names the Python the target runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache import cache_root
from harness.errors import IndexUnreachable, Interrupted, TargetError, UsageError
from harness.targets.base import ByteStream
from harness.targets.local import LocalTarget
from harness.targets.unpack import LAYOUT, unpack

# Tried when this machine's own tags match no wheel (e.g. a macOS laptop and a Linux-only
# vllm wheel): the source is the same, and we never execute it.
LINUX_TAGS = (
    "manylinux_2_31_x86_64",
    "manylinux_2_28_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
    "any",
)
_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
#: What pip's stderr says when no index answers at all (as opposed to "no such version").
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|name resolution|"
    r"Network is unreachable|ConnectTimeout|Read timed out|ProxyError|No route to host"
)
#: Set once pip found no index this process: later downloads fail at once, not after retries.
_unreachable: list[IndexUnreachable] = []


@dataclass(frozen=True)
class Pin:
    name: str
    version: str | None

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


#: ``NAME`` or ``NAME==1.2.3``: read as packaging reads it, without importing packaging (~20
#: ms before a check's first probe can start); anything else goes through packaging.
_PLAIN = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?:==(\d+(?:\.\d+)*))?$")


def _pin(spec: str, part: str) -> Pin:
    """One pin of ``spec``, read by packaging; a usage error unless it is NAME[==VERSION]."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(part)
    except InvalidRequirement as exc:
        raise UsageError(
            f"pypi:{spec}: {part!r} is not a requirement ({exc})",
            "write pypi:NAME==VERSION[,NAME==VERSION...]",
        ) from None
    specs = list(req.specifier)
    if (
        req.extras
        or req.marker
        or req.url
        or len(specs) > 1
        or (specs and specs[0].operator not in ("==", "==="))
    ):
        raise UsageError(
            f"pypi:{spec}: {part!r} must be NAME or NAME==VERSION",
            "a pypi: target pins exact versions, e.g. pypi:vllm==0.16.0",
        )
    if not _NAME.match(req.name):
        raise UsageError(f"pypi:{spec}: bad project name {req.name!r}")
    return Pin(req.name, specs[0].version if specs else None)


def parse_spec(spec: str) -> list[Pin]:
    """Pure: ``vllm==0.16.0,speculators==0.3.0`` -> pins; clear errors for anything else."""
    pins: list[Pin] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        plain = _PLAIN.match(part)
        pin = Pin(plain.group(1), plain.group(2)) if plain else _pin(spec, part)
        same = next((p for p in pins if normalize(p.name) == normalize(pin.name)), None)
        if same is not None and same.version != pin.version:  # one pin would silently win
            raise UsageError(
                f"pypi:{spec}: {pin.name} is pinned twice ({same.requirement} and "
                f"{pin.requirement}); a target holds one version of each",
                f"keep one, e.g. pypi:{same.requirement}; compare the two with harness diff "
                f"{pin.name} --from pypi:{same.requirement} --to pypi:{pin.requirement}",
            )
        if same is None:
            pins.append(pin)
    if not pins:
        raise UsageError("pypi: needs at least one NAME==VERSION", "e.g. -t pypi:vllm==0.16.0")
    return pins


_PYTHON = re.compile(r"^3\.(\d+)(\.\d+)?$")


def python_pin(spec: str, pins: list[Pin]) -> tuple[list[Pin], str | None]:
    """Pure: a ``python==3.12`` pin is no wheel; it names the Python the wheels are read for
    (what the target runs: an enum's call signature and ``sys.version_info`` tests depend on
    it). -> (the wheels' pins, ``"3.12"`` or None: this machine's Python)."""
    wheels = [p for p in pins if normalize(p.name) != "python"]
    said = [p for p in pins if normalize(p.name) == "python"]
    if not said:
        return wheels, None
    m = _PYTHON.match(said[0].version or "")
    if m is None:
        raise UsageError(
            f"pypi:{spec}: {said[0].requirement!r} must name a Python 3 version",
            "e.g. pypi:vllm==0.20.2,python==3.12 (the Python the target runs)",
        )
    if not wheels:
        raise UsageError("pypi: needs at least one NAME==VERSION", "e.g. -t pypi:vllm==0.16.0")
    return wheels, f"3.{m.group(1)}"


class PypiTarget(LocalTarget):
    """Read-only: probes run with this Python over the unpacked wheels' folders."""

    writable = False
    immutable = True

    def __init__(
        self, spec: str, cache: Path | None = None, wheelhouse: Path | None = None
    ) -> None:
        super().__init__(sys.executable, label=f"pypi:{spec}", kind="pypi")
        self.pins, self.python_version = python_pin(spec, parse_spec(spec))
        self.cache = cache or cache_root()
        #: a folder of wheels looked in before the index (``--baseline-from``), for offline boxes
        self.wheelhouse = wheelhouse
        self._roots: list[str] | None = None

    def identity(self) -> dict[str, Any]:
        got: dict[str, Any] = {"kind": self.kind, "pins": [p.requirement for p in self.pins]}
        if self.python_version:
            got["python"] = self.python_version
        return got

    def reads_for_python(self) -> str | None:
        return self.python_version

    def stream(self, argv: Sequence[str]) -> ByteStream:
        raise TargetError(f"{self.label} is read-only: it runs no commands")

    def probe_paths(self) -> list[str]:
        if self._roots is None:
            try:
                self._roots = [str(self._unpacked(p)) for p in self.pins]
            except OSError as e:  # a read-only HOME, a cache folder that is a file, ...
                where = f": {e.filename}" if e.filename else ""
                raise TargetError(
                    f"{self.label}: harness's cache {self.cache} cannot be written "
                    f"({e.strerror or type(e).__name__}{where}); the wheels are unpacked there",
                    "set HARNESS_CACHE to a folder you can write",
                ) from None
        return self._roots

    # -- cache ----------------------------------------------------------------------------
    def _unpacked(self, pin: Pin) -> Path:
        if not pin.version:
            raise _needs_version(pin)
        base = self.cache / "pypi"
        done = base / f"{normalize(pin.name)}-{pin.version}"
        if _current(done):
            return _used(done)
        if self._local_wheel(pin) is None and not _unreachable:
            from harness.targets import pypi_lazy

            if pypi_lazy.enabled():
                folder = pypi_lazy.fetch_unpacked(
                    pin.requirement,
                    pin.name,
                    pin.version,
                    self.cache / "wheels",
                    lambda v: base / f"{normalize(pin.name)}-{v}",
                    LINUX_TAGS,
                )
                if folder is not None:
                    return _used(folder)
        try:
            wheel = self._download(pin)
        except TargetError:
            if (done / ".complete").exists():  # an older layout, and no wheel to redo it
                return _used(done)
            raise
        version = wheel.name.split("-")[1]
        done = base / f"{normalize(pin.name)}-{version}"
        if not _current(done):
            unpack(wheel, done)
        return _used(done)

    def _local_wheel(self, pin: Pin) -> Path | None:
        """The pin's wheel in the wheelhouse or the cache, if one is there."""
        for folder in (self.wheelhouse, self.cache / "wheels"):
            for w in sorted(folder.glob("*.whl")) if folder is not None else ():
                n, v = w.name.split("-")[:2]
                if normalize(n) == normalize(pin.name) and v == pin.version:
                    return w
        return None

    def _download(self, pin: Pin) -> Path:
        dest = self.cache / "wheels"
        dest.mkdir(parents=True, exist_ok=True)
        local = self._local_wheel(pin) if pin.version else None
        if local is not None:
            return local
        if _unreachable:
            raise _unreachable[0]
        try:
            return self._fetch(pin, dest)
        except KeyboardInterrupt:
            raise Interrupted(
                f"nothing written: the partial download of {pin.requirement} was removed; "
                "see the cache with: harness cache list"
            ) from None

    def _fetch(self, pin: Pin, dest: Path) -> Path:
        with tempfile.TemporaryDirectory(dir=dest, prefix=".dl-") as tmp:
            base = [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--disable-pip-version-check",
                # no index answering is said in ~1 s, not after pip's 5 retries (~17 s)
                "--retries",
                "1",
                "--timeout",
                "15",
                "--progress-bar",
                "off",
                "-d",
                tmp,
                pin.requirement,
            ]
            cp = _pip(base, Path(tmp), pin.requirement)
            if cp.returncode != 0 and _UNREACHABLE.search(cp.stderr):
                _unreachable.append(
                    IndexUnreachable(
                        f"pypi: no package index answers from this machine "
                        f"(needed for {pin.requirement})",
                        "run where pip reaches an index, or bring the wheel along "
                        "(pip download --no-deps NAME==VER) and point harness at its folder",
                    )
                )
                raise _unreachable[0]
            if cp.returncode != 0 and "No matching distribution" in cp.stderr:
                tags = [a for t in LINUX_TAGS for a in ("--platform", t)]
                cp = _pip([*base, *tags, "--python-version", "3.12"], Path(tmp), pin.requirement)
            if cp.returncode != 0:
                missing = _no_such_version(pin, cp.stderr)
                if missing is not None:
                    raise missing
                tail = " ".join(cp.stderr.strip().splitlines()[-2:]) or "no output"
                raise TargetError(
                    f"pypi: could not download {pin.requirement}: {tail}",
                    f"check the name and version (`pip index versions {pin.name}`) and that "
                    "pip can reach your index",
                )
            got = sorted(Path(tmp).glob("*.whl"))
            if not got:
                raise TargetError(
                    f"pypi: {pin.requirement} has no wheel on the index",
                    "harness reads wheels only; sdists would need building",
                )
            final = dest / got[0].name
            os.replace(got[0], final)
            return final


def _current(done: Path) -> bool:
    """Unpacked completely, the way this harness unpacks."""
    try:
        return LAYOUT in (done / ".complete").read_text(encoding="utf-8")
    except OSError:
        return False


def _used(done: Path) -> Path:
    """Mark an unpacked pin as used now: ``harness cache list`` and ``prune`` go by it."""
    with contextlib.suppress(OSError):
        os.utime(done / ".complete")
    return done


def _pip(argv: list[str], workdir: Path, what: str) -> subprocess.CompletedProcess[str]:
    """pip, with a progress bar (size, rate, time left) when stderr is a terminal."""
    from harness.targets.download import run_pip

    return run_pip(argv, workdir, what)


def _no_such_version(pin: Pin, stderr: str) -> TargetError | None:
    """One line for a version the index does not have: the nearest ones, not all of them."""
    from packaging.version import InvalidVersion, Version

    from harness.targets.pipout import latest, nearest, versions_from_error

    versions = versions_from_error(stderr)
    if not versions or pin.version is None:
        return None
    try:
        if any(Version(v) == Version(pin.version) for v in versions):
            return None  # it exists; something else failed
    except InvalidVersion:
        pass
    near = ", ".join(nearest(pin.version, versions))
    return TargetError(
        f"pypi: {pin.name} {pin.version} does not exist on the index; nearest: {near}",
        f"pin one of them, e.g. pypi:{pin.name}=={latest(versions)} (the latest)",
    )


def _needs_version(pin: Pin) -> UsageError:
    """A pin without ``==VERSION``: say which version is the latest, so it can be pinned.

    A pypi: target must be exact -- "the latest" changes under a cached result.
    """
    from harness.targets.pipout import latest, versions_from_index

    argv = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check"]
    try:
        cp = subprocess.run(
            [*argv, pin.name], capture_output=True, text=True, check=False, timeout=120
        )
        newest = latest(versions_from_index(cp.stdout) or [])
    except (OSError, subprocess.TimeoutExpired):
        newest = None
    if newest is None:
        return UsageError(
            f"pypi:{pin.name} needs a version: pypi:{pin.name}==VERSION",
            f"`pip index versions {pin.name}` lists them (the index could not be asked here)",
        )
    return UsageError(
        f"pypi:{pin.name} needs a version; the latest is {newest}: pypi:{pin.name}=={newest}",
        "a pypi: target pins exact versions, so what it reads cannot change under you",
    )
