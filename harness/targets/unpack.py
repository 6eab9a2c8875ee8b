"""Unpack a wheel the way ``pypi:`` targets read it: sources, stubs, metadata, compiled names.

Whole wheels and lazily fetched ones (:mod:`harness.targets.lazywheel`: a sparse file holding
only the members :func:`member_kind` keeps) go through the same :func:`unpack`, so the folder
on disk is the same either way: extracted into a temporary folder, made read-only, renamed
into place only when complete.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from harness.errors import Interrupted, TargetError

KEEP_SUFFIXES = (".py", ".pyi")
#: Compiled modules are kept as empty files: their names say a module exists there (whose
#: contents cannot be read), so ``from sklearn.utils.sparsefuncs_fast import f`` is not
#: reported missing.
COMPILED_SUFFIXES = (".so", ".pyd")
#: The second line of ``.complete``; a folder unpacked another way is unpacked again.
LAYOUT = "layout 2: sources, stubs, dist-info, empty compiled modules"


def member_kind(name: str) -> str | None:
    """``"keep"`` (extracted), ``"compiled"`` (an empty file of that name) or None (skipped)."""
    parts = name.split("/")
    if name.startswith("/") or ".." in parts or name.endswith("/"):
        return None
    if name.endswith(COMPILED_SUFFIXES) and ".dist-info/" not in name:
        return "compiled"
    if name.endswith(KEEP_SUFFIXES) or ".dist-info/" in name:
        return "keep"
    return None


def unpack(
    wheel: Path,
    done: Path,
    *,
    notes: tuple[str, ...] = (),
    check: Callable[[Path], None] | None = None,
    kept: bool = True,
) -> None:
    """Extract sources + dist-info into a temp folder, make it read-only, rename into place.

    ``notes`` are extra lines for ``.complete``; ``check`` looks at the temp folder before it
    is published (raising TargetError refuses it); ``kept``: the wheel stays in the cache.
    """
    done.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=done.parent, prefix=f".{done.name}-"))
    hint = f"delete {wheel} and retry" if kept else "retry; the index sent a damaged wheel"
    try:
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                kind = member_kind(info.filename)
                if kind is None:
                    continue
                out = tmp.joinpath(*info.filename.split("/"))
                out.parent.mkdir(parents=True, exist_ok=True)
                if kind == "compiled":
                    out.touch()
                    continue
                with zf.open(info) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        if check is not None:
            check(tmp)
        (tmp / ".complete").write_text("".join(f"{x}\n" for x in (wheel.name, LAYOUT, *notes)))
        ro = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        for p in tmp.rglob("*"):
            if p.is_file():
                p.chmod(ro)
        if current(done):  # another harness (or a matrix job) published it meanwhile
            rmtree(tmp)
            return
        if done.exists():  # a half-made folder from an interrupted run, or an older layout
            rmtree(done)
        try:
            os.replace(tmp, done)
        except OSError:
            if not current(done):
                raise
            rmtree(tmp)  # lost a race to an identical folder: keep the one already there
    except (OSError, zipfile.BadZipFile) as exc:
        rmtree(tmp)
        raise TargetError(f"pypi: cannot unpack {wheel.name}: {exc}", hint) from None
    except TargetError:
        rmtree(tmp)
        raise
    except KeyboardInterrupt:
        rmtree(tmp)
        where = "is in the cache" if kept else "was not kept"
        raise Interrupted(
            f"nothing unpacked: {wheel.name} {where}, its half-unpacked copy was "
            "removed; see the cache with: harness cache list"
        ) from None


def current(done: Path) -> bool:
    """Unpacked completely, the way this harness unpacks."""
    try:
        return LAYOUT in (done / ".complete").read_text(encoding="utf-8")
    except OSError:
        return False


def check_record(root: Path) -> None:
    """Every extracted file whose wheel ``RECORD`` row has a sha256 matches it (compiled
    modules, kept as empty files, are not compared).

    Raises:
        TargetError: a file differs from its RECORD hash (the wheel is inconsistent).
    """
    for record in root.glob("*.dist-info/RECORD"):
        text = record.read_text(encoding="utf-8", errors="replace")
        for row in csv.reader(io.StringIO(text)):
            if len(row) < 2 or not row[1].startswith("sha256=") or member_kind(row[0]) != "keep":
                continue
            path = root.joinpath(*row[0].split("/"))
            if not path.is_file():
                continue
            digest = hashlib.sha256(path.read_bytes()).digest()
            if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != row[1][7:]:
                raise TargetError(
                    f"pypi: {row[0]} does not match the sha256 in the wheel's RECORD",
                    "retry; the index sent a damaged or inconsistent wheel",
                )


def rmtree(path: Path) -> None:
    """Remove a folder this module made read-only."""
    if not path.exists():
        return

    def onerror(func, p, _exc):  # type: ignore[no-untyped-def]
        os.chmod(p, stat.S_IWUSR | stat.S_IRUSR | stat.S_IXUSR)
        func(p)

    for p in path.rglob("*"):
        if p.is_dir():
            p.chmod(0o755)
    shutil.rmtree(path, onerror=onerror)
