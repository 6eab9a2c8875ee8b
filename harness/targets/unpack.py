"""Unpack a wheel the way ``pypi:`` targets read it: sources, stubs, metadata, compiled names.

Whole wheels and lazily fetched ones (:mod:`harness.targets.lazywheel`: a sparse file holding
only the members :func:`member_kind` keeps) go through the same :func:`write_layout`, so the
folder on disk is the same either way: extracted into a temporary folder, made read-only,
renamed into place only when complete.

Creating ~2,000 files (a large package's sources) is the unpack's cost, and it is the kernel's:
allocating an inode, under the lock of the file's directory. On ext4 a file's inode comes from
its directory's block group, and a new directory's group from Orlov's allocator: near its
parent's, unless the parent is marked the top of unrelated hierarchies (``chattr +T``). The
cache's ``pypi/`` folder is such a top (each pin's folder is unrelated to the others), so it is
marked (:func:`_mark_top`): each layout lands in a group with room. Unmarked, on a busy ext4
without a journal, 1,735 files took 1.2-1.6 s of kernel time skipping recently deleted inodes
(``recently_deleted``, measured with perf) in the parent's much-used group; marked, 0.05 s.
Then :data:`WRITERS` threads do the work, each owning some of the directories (no two wait on
one directory's lock), while the caller's thread only hands members out (for a lazy wheel,
while later spans still arrive). Each thread reads, decompresses and checks its members
(zlib and the hashes let go of the GIL), creates each file read-only and hashes what it
wrote, so neither a chmod pass nor the RECORD check reads anything back.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import posixpath
import shutil
import stat
import struct
import sys
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.errors import Interrupted, TargetError

KEEP_SUFFIXES = (".py", ".pyi")
#: Compiled modules are kept as empty files: their names say a module exists there (whose
#: contents cannot be read), so ``from sklearn.utils.sparsefuncs_fast import f`` is not
#: reported missing.
COMPILED_SUFFIXES = (".so", ".pyd")
#: The second line of ``.complete``; a folder unpacked another way is unpacked again.
LAYOUT = "layout 2: sources, stubs, dist-info, empty compiled modules"
#: Threads creating files at once.
WRITERS = 8
_RO = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
#: ``FS_TOPDIR_FL`` (linux/fs.h): chattr's ``T``.
_TOPDIR = 0x00020000
#: A local file header's flags and its name's and extra field's lengths (the rest is unused:
#: the central directory's sizes and CRC are the ones checked).
_LOCAL = struct.Struct("<6xH18xHH")


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


def unpack(wheel: Path, done: Path, *, notes: tuple[str, ...] = (), kept: bool = True) -> None:
    """Extract a whole wheel's sources + dist-info into ``done`` (see :func:`write_layout`).

    ``notes`` are extra lines for ``.complete``; ``kept``: the wheel stays in the cache.
    """
    hint = f"delete {wheel} and retry" if kept else "retry; the index sent a damaged wheel"
    try:
        with zipfile.ZipFile(wheel) as zf:
            write_layout(zf, wheel, zf.infolist(), done, wheel.name, hint, notes=lambda: notes)
    except (OSError, zipfile.BadZipFile) as exc:  # not there, or not a zip at all
        raise TargetError(f"pypi: cannot unpack {wheel.name}: {exc}", hint) from None
    except KeyboardInterrupt:
        where = "is in the cache" if kept else "was not kept"
        raise Interrupted(
            f"nothing unpacked: {wheel.name} {where}, its half-unpacked copy was "
            "removed; see the cache with: harness cache list"
        ) from None


def write_layout(
    zf: zipfile.ZipFile,
    source: Path,
    members: Iterable[zipfile.ZipInfo],
    done: Path,
    name: str,
    hint: str,
    *,
    notes: Callable[[], tuple[str, ...]] = tuple,
    check_record: bool = False,
) -> None:
    """Extract the kept ``members`` of ``zf`` (whose bytes are in the file ``source``), as
    they come -- a lazy wheel's while it is still fetched -- into a temporary folder beside
    ``done``, then publish it as ``done``.

    ``name`` is the wheel's file name (the first line of ``.complete``; ``notes()`` the lines
    after the layout); ``check_record``: refuse files that differ from the wheel's RECORD.
    Each member is checked as :mod:`zipfile` checks it (its local header, name, size and
    CRC-32). Of members sharing a name, the last in the directory wins, as extracting them in
    turn would give.

    Raises:
        TargetError: a damaged member or a RECORD mismatch (``hint`` says what to do), or
            whatever ``members`` raised; nothing is left behind.
        KeyboardInterrupt: Ctrl-C; nothing is left behind.
    """
    last = {i.filename: i for i in zf.infolist()}
    layout = _Layout(done, check_record)
    try:
        with open(source, "rb", buffering=0) as src:
            reader = _Reader(zf, src.fileno())
            for info in members:
                kind = member_kind(info.filename)
                if kind is None or last[info.filename] is not info:
                    continue
                layout.begin()  # before the first read: a damaged member leaves an empty pypi/
                layout.add(info.filename, reader.read if kind == "keep" else None, info)
            layout.publish(name, notes())
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError) as exc:
        layout.discard()
        raise TargetError(f"pypi: cannot unpack {name}: {exc}", hint) from None
    except BaseException:
        layout.discard()
        raise


class _Reader:
    """A member's bytes, read with ``pread`` (so threads share the file) and checked as
    :mod:`zipfile` checks them; compressions other than stored and deflate go through
    ``zf`` itself, one at a time."""

    def __init__(self, zf: zipfile.ZipFile, fd: int) -> None:
        self.zf, self.fd, self._lock = zf, fd, threading.Lock()

    def read(self, info: zipfile.ZipInfo) -> bytes:
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            with self._lock:
                return self.zf.read(info)
        head = os.pread(self.fd, 30, info.header_offset)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("Bad magic number for file header")
        flags, nlen, xlen = _LOCAL.unpack(head)
        raw_name = os.pread(self.fd, nlen, info.header_offset + 30)
        local = raw_name.decode("utf-8" if flags & 0x800 else "cp437", errors="replace")
        if local != info.orig_filename:
            raise zipfile.BadZipFile(
                f"File name in directory {info.orig_filename!r} and header {raw_name!r} differ."
            )
        if flags & 0x61:  # encrypted, patched or strongly encrypted: no wheel is
            raise zipfile.BadZipFile(f"{info.filename!r} is encrypted or patched")
        raw = os.pread(self.fd, info.compress_size, info.header_offset + 30 + nlen + xlen)
        if len(raw) != info.compress_size:
            raise EOFError(f"{info.filename!r} ends early")
        data = raw
        if info.compress_type == zipfile.ZIP_DEFLATED:
            data = zlib.decompress(raw, -15, max(info.file_size, 1))
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise zipfile.BadZipFile(f"Bad CRC-32 for file {info.filename!r}")
        return data


class _Layout:
    """A temporary folder beside ``done`` filled by writer threads; published by a rename."""

    def __init__(self, done: Path, check_record: bool) -> None:
        self.done = done
        self._dirs: set[str] = set()  # made already (plain strings: ~2,000 files, no Paths)
        self._pending: list[Future[None]] = []
        self._writers: list[ThreadPoolExecutor] = []
        self.tmp: Path | None = None
        self.digests: dict[str, bytes] | None = {} if check_record else None
        self.records: dict[str, bytes] = {}
        self._error: BaseException | None = None  # the first a writer met: stop at the next

    def begin(self) -> None:
        """Make the temporary folder (and the cache's ``pypi/``) once there is a member to
        write: a fetch stopped before any arrived leaves nothing at all."""
        if self.tmp is None:
            self.done.parent.mkdir(parents=True, exist_ok=True)
            _mark_top(self.done.parent)
            self.tmp = Path(tempfile.mkdtemp(dir=self.done.parent, prefix=f".{self.done.name}-"))
            self._dirs.add(str(self.tmp))
            self._writers = [
                ThreadPoolExecutor(1, thread_name_prefix="unpack") for _ in range(WRITERS)
            ]

    def add(
        self,
        name: str,
        read: Callable[[zipfile.ZipInfo], bytes] | None,
        info: zipfile.ZipInfo,
    ) -> None:
        """Write member ``name``: ``read(info)`` (None: a compiled module, an empty file)."""
        assert self.tmp is not None and self._writers, "begin() first"
        if self._error is not None:
            raise self._error
        folder, _, _ = name.rpartition("/")
        writer = self._writers[hash(folder) % len(self._writers)]  # one per directory
        self._pending.append(writer.submit(self._write, folder, name, read, info))

    def _write(
        self, folder: str, name: str, read: Callable[[zipfile.ZipInfo], bytes] | None, info: Any
    ) -> None:
        """In a writer thread: read (decompress, check), create ``out`` read-only, hash."""
        try:
            data = read(info) if read is not None else None
        except BaseException as exc:
            self._error = self._error or exc
            raise
        root = str(self.tmp)
        parent = os.path.join(root, *folder.split("/")) if folder else root
        if parent not in self._dirs:
            os.makedirs(parent, exist_ok=True)  # a race with another writer is fine
            self._dirs.add(parent)
        fd = os.open(
            os.path.join(parent, name[len(folder) + 1 :] if folder else name),
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
            _RO,
        )
        try:
            view = memoryview(data or b"")
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, _RO)  # exactly r--r--r--, whatever the umask
        finally:
            os.close(fd)
        if data is not None and self.digests is not None:
            self.digests[name] = hashlib.sha256(data).digest()
            if name.endswith(".dist-info/RECORD"):
                self.records[name] = data

    def publish(self, name: str, notes: tuple[str, ...]) -> None:
        """Wait for the writes, check RECORD, write ``.complete``, rename into place."""
        self.begin()  # nothing kept: an empty folder, still a complete one
        assert self.tmp is not None
        for f in self._pending:
            f.result()
        if self.digests is not None:
            for text in self.records.values():
                _check(text, self.digests.get)
        complete = self.tmp / ".complete"
        complete.write_text("".join(f"{x}\n" for x in (name, LAYOUT, *notes)))
        complete.chmod(_RO)
        if current(self.done):  # another harness (or a matrix job) published it meanwhile
            self.discard()
            return
        if self.done.exists():  # a half-made folder from an interrupted run, or an older layout
            rmtree(self.done)
        try:
            os.replace(self.tmp, self.done)
        except OSError:
            if not current(self.done):
                raise
            self.discard()  # lost a race to an identical folder: keep the one already there
        self._close()

    def discard(self) -> None:
        """Stop the writers, remove the temporary folder."""
        self._close()
        if self.tmp is not None:
            rmtree(self.tmp)

    def _close(self) -> None:
        for writer in self._writers:
            writer.shutdown(wait=False, cancel_futures=True)
        for writer in self._writers:
            writer.shutdown(wait=True)


def _mark_top(folder: Path) -> None:
    """Mark ``folder`` the top of unrelated directory hierarchies (``chattr +T``: ext2/3/4's
    Orlov allocator then spreads the folders made in it over block groups); where the file
    system or platform has no such flag, nothing."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl

    long = struct.calcsize("l")
    get, put = (2 << 30) | (long << 16) | 0x6601, (1 << 30) | (long << 16) | 0x6602
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        flags = bytearray(4)
        fcntl.ioctl(fd, get, flags)
        value = int.from_bytes(flags, sys.byteorder)
        if not value & _TOPDIR:
            fcntl.ioctl(fd, put, (value | _TOPDIR).to_bytes(4, sys.byteorder))
    except OSError:
        pass
    finally:
        os.close(fd)


def current(done: Path) -> bool:
    """Unpacked completely, the way this harness unpacks."""
    try:
        return LAYOUT in (done / ".complete").read_text(encoding="utf-8")
    except OSError:
        return False


def check_record(root: Path) -> None:
    """Every file under ``root`` whose wheel ``RECORD`` row has a sha256 matches it (compiled
    modules, kept as empty files, are not compared).

    Raises:
        TargetError: a file differs from its RECORD hash (the wheel is inconsistent).
    """

    def digest(name: str) -> bytes | None:
        path = root.joinpath(*name.split("/"))
        return hashlib.sha256(path.read_bytes()).digest() if path.is_file() else None

    for record in root.glob("*.dist-info/RECORD"):
        _check(record.read_bytes(), digest)


def _check(text: bytes, digest: Callable[[str], bytes | None]) -> None:
    """Compare each kept file's ``digest(name)`` (None: not kept) with its RECORD row."""
    rows = csv.reader(io.StringIO(text.decode("utf-8", errors="replace")))
    for row in rows:
        if len(row) < 2 or not row[1].startswith("sha256=") or member_kind(row[0]) != "keep":
            continue
        got = digest(posixpath.normpath(row[0]))
        if got is not None and base64.urlsafe_b64encode(got).rstrip(b"=").decode() != row[1][7:]:
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
