"""What a dist's installed files say now, for the ``patchops`` probe: each file's bytes, sha
and mode, the dist's RECORD hashes, which other dist owns a file, harness's manifest and
backups, and who holds the patch lock (read, never taken, here).

:class:`Reader` is the read side; :class:`probes.patching.patchops.Ops` extends it with the writing
transaction and its recovery.
"""

from __future__ import annotations

import base64
import errno
import fcntl
import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

from probes._finder import ProbeFailure

STATE = ".harness-patches"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_sha(entry: str) -> str | None:
    """RECORD's ``sha256=<urlsafe b64>`` -> hex, so it compares with ours."""
    if not entry.startswith("sha256="):
        return None
    raw = entry[len("sha256=") :]
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
    except ValueError:
        return None


class Reader:
    """One dist's files under one site-packages ``root``, and harness's state folder there."""

    def __init__(self, root: str, dist: str, warn: Callable[[str], None]) -> None:
        self.root = os.path.realpath(root)
        self.dist = dist
        self.state = os.path.join(self.root, STATE)
        self.warn = warn

    # -- paths ----------------------------------------------------------------------------
    def inside(self, rel: str) -> str:
        """Absolute path of ``rel``; refuse anything resolving outside site-packages."""
        if rel.startswith("/") or ".." in rel.split("/"):
            raise ProbeFailure("path-escapes", f"{rel}: leaves site-packages", {"path": rel})
        full = os.path.join(self.root, rel)
        real = os.path.realpath(full)
        if not real.startswith(self.root + os.sep):
            raise ProbeFailure(
                "path-escapes",
                f"{rel}: resolves outside site-packages (through a symlink to {real})",
                {"path": rel},
            )
        return full

    # -- read -----------------------------------------------------------------------------
    def read(
        self, wanted: list[str], meta: dict[str, Any], files: list[tuple[str, str, str]]
    ) -> dict[str, Any]:
        record = self._record(meta)
        manifest = self.manifest()
        out_files: dict[str, Any] = {}
        for rel in wanted:
            try:
                full = self.inside(rel)
            except ProbeFailure as exc:
                out_files[rel] = {"error": str(exc)}
                continue
            out_files[rel] = self._describe(rel, full)
        backups: dict[str, dict[str, str] | None] = {}
        for rel in manifest.get("files") or {}:
            b = os.path.join(self.state, "backups", rel)
            try:
                with open(b, "rb") as f:
                    data = f.read()
                backups[rel] = {"sha256": sha256(data), "text": data.decode("utf-8")}
            except (OSError, UnicodeDecodeError):
                backups[rel] = None
        actual: dict[str, str | None] = {}
        for _mod, full, rel in files:
            try:
                with open(full, "rb") as f:
                    actual[rel] = sha256(f.read())
            except OSError:
                actual[rel] = None
        return {
            "root": self.root,
            "dist": meta.get("name"),
            "version": meta.get("version"),
            "record": record,
            "owners": self._owners([r for r in wanted if r not in record], meta),
            "actual": actual,
            "files": out_files,
            "manifest": manifest,
            "backups": backups,
            "lock": self._holder(),
        }

    def _describe(self, rel: str, full: str) -> dict[str, Any]:
        try:
            with open(full, "rb") as f:
                data = f.read()
            st = os.stat(full)
        except FileNotFoundError:
            return {"exists": False}
        except OSError as exc:
            return {"error": f"{rel}: {exc.strerror}"}
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        return {
            "exists": True,
            "sha256": sha256(data),
            "text": text,
            "mode": st.st_mode & 0o7777,
            "symlink": os.path.islink(full),
        }

    def _owners(self, paths: list[str], meta: dict[str, Any]) -> dict[str, str]:
        """Which other dist's RECORD lists each of ``paths`` (read only when there are any)."""
        if not paths:
            return {}
        mine = _norm(meta.get("name") or self.dist)
        wanted = set(paths)
        out: dict[str, str] = {}
        for e in sorted(os.listdir(self.root)):
            if not e.endswith(".dist-info") or _norm(_dist_of(e)) == mine:
                continue
            try:
                with open(os.path.join(self.root, e, "RECORD"), encoding="utf-8") as f:
                    for line in f:
                        rel = line.rstrip("\n").rsplit(",", 2)[0]
                        if rel in wanted and rel not in out:
                            out[rel] = _dist_name(os.path.join(self.root, e), e)
            except OSError:
                pass
        return out

    def _record(self, meta: dict[str, Any]) -> dict[str, str]:
        name = meta.get("name") or self.dist
        out: dict[str, str] = {}
        for e in os.listdir(self.root):
            if not e.endswith(".dist-info"):
                continue
            n = _norm(_dist_of(e))
            if n != _norm(name):
                continue
            try:
                with open(os.path.join(self.root, e, "RECORD"), encoding="utf-8") as f:
                    for line in f:
                        parts = line.rstrip("\n").rsplit(",", 2)
                        if len(parts) == 3:
                            h = record_sha(parts[1])
                            if h:
                                out[parts[0]] = h
            except OSError:
                pass
        return out

    def manifest(self) -> dict[str, Any]:
        """This dist's entry of the manifest ({} for none). One that cannot be read is refused,
        never read as empty: that would call harness's own edits hand edits, and have
        ``revert-patches`` find nothing to revert."""
        entry = self.whole_manifest().get(self.dist) or {}
        if not isinstance(entry, dict) or not isinstance(entry.get("files") or {}, dict):
            why = "its entry for %s is not a table of files" % self.dist  # noqa: UP031
            raise self._bad_manifest(why)
        return entry

    def whole_manifest(self) -> dict[str, Any]:
        path = os.path.join(self.state, "manifest.json")
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise self._bad_manifest(exc.strerror or type(exc).__name__) from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise self._bad_manifest("not UTF-8 text") from None
        except ValueError as exc:
            why = "empty" if not raw.strip() else "not JSON: %s" % exc  # noqa: UP031
            raise self._bad_manifest(why) from None
        if not isinstance(data, dict):
            raise self._bad_manifest("not a JSON object")
        return data

    def _bad_manifest(self, why: str) -> ProbeFailure:
        path = os.path.join(self.state, "manifest.json")
        return ProbeFailure(
            "bad-manifest",
            "harness's manifest %s cannot be read (%s); nothing was done" % (path, why),  # noqa: UP031
            {"path": path, "dist": self.dist},
        )

    # -- lock ---------------------------------------------------------------------------
    # Liveness is the flock itself, never ``kill(pid, 0)``: the kernel drops a dead process's
    # flock at exit, while its pid stays "alive" as an unreaped zombie (containers whose PID 1
    # does not reap) or comes back as another process (pid reuse).
    def _try_flock(self, how: int) -> int | None:
        """An fd holding the lock file's flock (``how``, non-blocking), or None if busy."""
        path = os.path.join(self.state, "lock")
        try:
            fd = (
                os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                if how == fcntl.LOCK_EX
                else os.open(path, os.O_RDONLY)
            )
        except OSError:
            if how == fcntl.LOCK_EX:
                raise
            return -1  # no lock file (never locked here) or unreadable: no holder to see
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            return None
        return fd

    def _held(self) -> bool:
        """True while a writer (or a recovery) holds the lock."""
        fd = self._try_flock(fcntl.LOCK_SH)
        if fd is None:
            return True
        if fd >= 0:
            os.close(fd)  # which drops the shared flock
        return False

    def _holder(self) -> dict[str, Any] | None:
        if not self._held():
            return None
        try:
            with open(os.path.join(self.state, "lock.json"), encoding="utf-8") as f:
                return dict(json.load(f))
        except (OSError, ValueError, TypeError):
            return {}


def _norm(name: str) -> str:
    return name.replace("_", "-").replace(".", "-").lower()


def _dist_of(info_dir: str) -> str:
    """``vllm-0.16.0.dist-info`` -> ``vllm`` (the folder name's escaped dist name)."""
    return info_dir[: -len(".dist-info")].split("-", 1)[0]


def _dist_name(info_path: str, info_dir: str) -> str:
    """The dist's own spelling of its name (METADATA ``Name:``), else the folder's."""
    try:
        with open(os.path.join(info_path, "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("name:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    except OSError:
        pass
    return _dist_of(info_dir)
