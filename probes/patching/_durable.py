"""Durable file writes for the ``patchops`` probe: a file is the old bytes or the new ones, on
disk, never half of each -- temp file + fsync, ``os.replace``, fsync of the folder -- and the
stale bytecode of a rewritten module goes with it.
"""

from __future__ import annotations

import contextlib
import os


def read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def write_file(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except OSError:
        os.unlink(path)  # a full disk leaves no half-written file behind
        raise
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes, mode: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.harness-tmp"
    write_file(tmp, data, mode)
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path))


def copy_file(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(src, "rb") as f:
        data = f.read()
    write_file(dst, data, os.stat(src).st_mode & 0o7777)


def fsync_dir(d: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def pycache_of(full: str) -> list[str]:
    """The bytecode files of the module ``full`` (``__pycache__/STEM.*.pyc``)."""
    d = os.path.join(os.path.dirname(full), "__pycache__")
    stem = os.path.basename(full)[:-3] if full.endswith(".py") else None
    if stem is None or not os.path.isdir(d):
        return []
    return [os.path.join(d, e) for e in sorted(os.listdir(d))
            if e.startswith(stem + ".") and e.endswith(".pyc")]  # fmt: skip


def drop_pycache(full: str) -> None:
    """Stale bytecode: a same-second, same-size edit is otherwise not seen by Python."""
    for pyc in pycache_of(full):
        with contextlib.suppress(OSError):
            os.unlink(pyc)


def keep_pycache(full: str, kept: str) -> None:
    """Before a module's first change: its bytecode (pip's, RECORD lists it) and its source's
    mtime, which that bytecode is valid for, into the folder ``kept``."""
    if not os.path.exists(full):
        return
    for pyc in pycache_of(full):
        copy_file(pyc, os.path.join(kept, os.path.basename(pyc)))
    write_atomic(os.path.join(kept, "mtime"), str(os.stat(full).st_mtime_ns).encode(), 0o644)


def restore_pycache(full: str, kept: str) -> None:
    """Once a module has its original bytes again: its source's mtime and its bytecode as they
    were, so Python takes that bytecode as valid and the folder is as pip left it."""
    mtime = read_text(os.path.join(kept, "mtime"))
    if mtime is None or not os.path.exists(full):
        return
    os.utime(full, ns=(int(mtime), int(mtime)))
    d = os.path.join(os.path.dirname(full), "__pycache__")
    for name in sorted(os.listdir(kept)):
        if name.endswith(".pyc"):
            copy_file(os.path.join(kept, name), os.path.join(d, name))


def rmtree(path: str) -> None:
    if not os.path.isdir(path):
        return
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for n in filenames:
            os.unlink(os.path.join(dirpath, n))
        for n in dirnames:
            os.rmdir(os.path.join(dirpath, n))
    os.rmdir(path)
