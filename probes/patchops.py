"""Probe: read and transactionally write a dist's installed files on the target.

args: {"action": "read" | "write", "dist": "speculators", "files": [rel paths],
       "changes": [{"path", "before_sha", "after_text" | null (delete), "mode"}],
       "manifest": {...} | null, "lock_holder": {...}, "paths": [...] | null}

Everything that must not be half-done happens here, on the target, in one process that a
dropped SSH link cannot stop (SIGHUP/SIGPIPE ignored, stdin read in full first):
lock (flock, holder named) -> journal -> copy current files aside -> temp file + fsync ->
os.replace for each -> fsync dirs -> manifest -> journal removed. A journal found by a later run
means a swap was interrupted; every file is then rolled back to its journalled state.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import fcntl
import hashlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from probes._finder import Finder, ProbeFailure, default_paths, dist_files

STATE = ".harness-patches"
LOCK_WAIT_S = 1.0  # a second writer fails (naming the holder) after this long


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


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a dropped link must not stop a transaction
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    if args.get("action") == "write":
        # A terminal's Ctrl-C reaches a local probe too; the controller waits for the
        # transaction and then says what it left, so the transaction must not stop halfway.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    finder = Finder(args.get("paths") or default_paths())
    found = dist_files(finder, args["dist"])
    if found is None:
        raise ProbeFailure(
            "dist-not-installed",
            f"{args['dist']} is not installed on this interpreter",
            {
                "searched": finder.paths,
                "suggestions": finder.close_dists(args["dist"]),
                "executable": sys.executable,
            },
        )
    meta, files = found
    root = _root_of(finder, files)
    ops = Ops(root, args["dist"], warn)
    recovered = ops.recover()
    if args["action"] == "read":
        out = ops.read(args.get("files") or [], meta, files)
    elif args["action"] == "write":
        out = ops.write(args["changes"], args.get("manifest"), args.get("lock_holder") or {})
    else:
        raise ProbeFailure("usage", f"unknown action {args['action']!r}")
    out["recovered"] = recovered
    return out


def _root_of(finder: Finder, files: list[tuple[str, str, str]]) -> str:
    if files:
        _mod, path, rel = files[0]
        return path[: len(path) - len(rel)].rstrip(os.sep)
    return finder.paths[0]


class Ops:
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
        self, wanted: list[str], meta: dict, files: list[tuple[str, str, str]]
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
        backups = {}
        for rel in manifest.get("files") or {}:
            b = os.path.join(self.state, "backups", rel)
            try:
                with open(b, "rb") as f:
                    data = f.read()
                backups[rel] = {"sha256": sha256(data), "text": data.decode("utf-8")}
            except (OSError, UnicodeDecodeError):
                backups[rel] = None
        actual = {}
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

    def _owners(self, paths: list[str], meta: dict) -> dict[str, str]:
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

    def _record(self, meta: dict) -> dict[str, str]:
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
        try:
            with open(os.path.join(self.state, "manifest.json"), encoding="utf-8") as f:
                data = json.load(f)
            return data.get(self.dist) or {}
        except (OSError, ValueError):
            return {}

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

    def _lock(self, holder: dict[str, Any]) -> int:
        os.makedirs(self.state, mode=0o755, exist_ok=True)
        deadline = time.monotonic() + LOCK_WAIT_S  # rides out a reader's or recovery's peek
        fd = self._try_flock(fcntl.LOCK_EX)
        while fd is None and time.monotonic() < deadline:
            time.sleep(0.05)
            fd = self._try_flock(fcntl.LOCK_EX)
        if fd is None:
            who = self._holder() or {}
            raise ProbeFailure(
                "locked",
                f"{self.root} is being patched by another harness: "
                f"{who.get('user', '?')}@{who.get('host', '?')} pid {who.get('pid', '?')} "
                f"({who.get('command', '?')}) since {who.get('since', '?')}",
                who,
            )
        info = {
            **holder,
            "pid": os.getpid(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "target_host": socket.gethostname(),
        }
        _write_atomic(os.path.join(self.state, "lock.json"), json.dumps(info).encode(), 0o644)
        return fd

    # -- write ----------------------------------------------------------------------------
    def write(
        self, changes: list[dict[str, Any]], manifest: dict[str, Any] | None, holder: dict[str, Any]
    ) -> dict[str, Any]:
        fd = self._lock(holder)
        try:
            return self._transaction(changes, manifest)
        except OSError:  # a full disk: copies made before the journal go; a journal is undone
            if not os.path.exists(os.path.join(self.state, "journal.json")):  # by the next read
                _rmtree(os.path.join(self.state, "txn"))
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.state, "lock.json"))
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _transaction(
        self, changes: list[dict[str, Any]], manifest: dict[str, Any] | None
    ) -> dict[str, Any]:
        # 1. validate everything before touching anything
        plan = []
        for ch in changes:
            full = self.inside(ch["path"])
            cur = self._describe(ch["path"], full)
            if "error" in cur:
                raise ProbeFailure("unreadable", cur["error"], {"path": ch["path"]})
            cur_sha = cur.get("sha256")
            if cur_sha != ch.get("before_sha"):
                raise ProbeFailure(
                    "changed",
                    f"{ch['path']} changed since it was read (sha256 "
                    f"{str(cur_sha)[:12]} != {str(ch.get('before_sha'))[:12]}); nothing written",
                    {"path": ch["path"]},
                )
            after = ch.get("after_text")
            data = None if after is None else after.encode("utf-8")
            if data is not None and ch["path"].endswith(".py"):
                try:
                    compile(data, full, "exec", dont_inherit=True)
                except SyntaxError as exc:
                    raise ProbeFailure(
                        "syntax",
                        f"{ch['path']}:{exc.lineno}: the patched file does not "
                        f"compile on this Python: {exc.msg}; nothing written",
                        {"path": ch["path"], "line": exc.lineno},
                    ) from None
            mode = ch.get("mode") or cur.get("mode") or 0o644
            plan.append((ch["path"], full, cur, data, mode))
        # 2. journal + copies of the current state, durable before the first swap
        txn = os.path.join(self.state, "txn")
        _rmtree(txn)
        os.makedirs(txn, mode=0o755)
        originals = {c["path"]: c["original_text"] for c in changes if "original_text" in c}
        for rel, full, cur, _data, mode in plan:
            if cur.get("exists"):
                _copy(full, os.path.join(txn, rel))
                if rel not in (self.manifest().get("files") or {}):
                    # not patched by harness: the original is what is there now (not a backup
                    # a rolled-back transaction left), or the wheel's file make-patch sends
                    backup = os.path.join(self.state, "backups", rel)
                    if rel in originals:
                        _write_atomic(backup, originals[rel].encode("utf-8"), mode)
                    else:
                        _copy(full, backup)
        journal = {
            "pid": os.getpid(),
            "started": time.time(),
            "manifest_before": _read_text(os.path.join(self.state, "manifest.json")),
            "files": [
                {"path": rel, "existed": bool(cur.get("exists")), "mode": cur.get("mode")}
                for rel, _f, cur, _d, _m in plan
            ],
        }
        _write_atomic(os.path.join(self.state, "journal.json"), json.dumps(journal).encode(), 0o644)
        # 3. temp files next to their targets (same filesystem), then the swaps
        temps = []
        for rel, full, _cur, data, mode in plan:
            if data is None:
                temps.append((rel, full, None))
                continue
            tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.harness-tmp")
            _write_file(tmp, data, mode)
            temps.append((rel, full, tmp))
        delay = float(os.environ.get("HARNESS_TEST_SWAP_DELAY", "0") or 0)
        for _rel, full, tmp in temps:
            if tmp is None:
                os.unlink(full)
            else:
                os.replace(tmp, full)
            _fsync_dir(os.path.dirname(full))
            _drop_pycache(full)
            if delay:
                time.sleep(delay)  # lets fault tests kill us between two swaps
        # 4. manifest, then the journal goes: the transaction is committed
        if manifest is not None:
            self._save_manifest(manifest)
            if delay:
                time.sleep(delay)  # ... and between the manifest and the commit
        os.unlink(os.path.join(self.state, "journal.json"))
        _fsync_dir(self.state)
        _rmtree(txn)
        if manifest is not None and not (manifest.get("files") or {}):
            _rmtree(os.path.join(self.state, "backups"))  # fully reverted: nothing to keep
        return {"written": [rel for rel, _f, _t in temps], "root": self.root}

    def _save_manifest(self, manifest: dict[str, Any]) -> None:
        path = os.path.join(self.state, "manifest.json")
        try:
            whole = json.loads(_read_text(path) or "{}")
        except ValueError:
            whole = {}
        if manifest.get("files"):
            whole[self.dist] = manifest
        else:
            whole.pop(self.dist, None)
        _write_atomic(path, json.dumps(whole, indent=1, sort_keys=True).encode(), 0o644)

    # -- recovery -------------------------------------------------------------------------
    def recover(self) -> dict[str, Any] | None:
        """Roll back a transaction whose process died between two swaps (files + manifest)."""
        jpath = os.path.join(self.state, "journal.json")
        if not os.path.exists(jpath):
            return None
        try:
            fd = self._try_flock(fcntl.LOCK_EX)
        except OSError:
            return None  # cannot even lock here (read-only site-packages): leave it be
        if fd is None:
            return None  # its writer still holds the lock: the transaction is running
        try:
            try:
                with open(jpath, encoding="utf-8") as f:
                    journal = json.load(f)
            except (OSError, ValueError):
                return None  # another recovery finished first
            return self._roll_back(jpath, journal)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _roll_back(self, jpath: str, journal: dict[str, Any]) -> dict[str, Any]:
        restored = []
        for entry in journal.get("files") or []:
            rel = entry["path"]
            full = os.path.join(self.root, rel)
            saved = os.path.join(self.state, "txn", rel)
            tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.harness-tmp")
            if os.path.exists(tmp):
                os.unlink(tmp)
            if entry.get("existed") and os.path.exists(saved):
                with open(saved, "rb") as f:
                    data = f.read()
                cur = None
                if os.path.exists(full):
                    with open(full, "rb") as f:
                        cur = f.read()
                if cur != data:
                    _write_atomic(full, data, entry.get("mode") or 0o644)
                    _drop_pycache(full)
                    restored.append(rel)
            elif not entry.get("existed") and os.path.exists(full):
                os.unlink(full)
                restored.append(rel)
        if "manifest_before" in journal:  # it may have been saved just before the kill
            mpath = os.path.join(self.state, "manifest.json")
            before = journal["manifest_before"]
            if before is None:
                if os.path.exists(mpath):
                    os.unlink(mpath)
            elif _read_text(mpath) != before:
                _write_atomic(mpath, before.encode("utf-8"), 0o644)
        os.unlink(jpath)
        _fsync_dir(self.state)
        _rmtree(os.path.join(self.state, "txn"))
        return {"rolled_back": restored, "pid": journal.get("pid")}


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


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _write_file(path: str, data: bytes, mode: int) -> None:
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


def _write_atomic(path: str, data: bytes, mode: int) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.harness-tmp"
    _write_file(tmp, data, mode)
    os.replace(tmp, path)
    _fsync_dir(os.path.dirname(path))


def _copy(src: str, dst: str) -> None:
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(src, "rb") as f:
        data = f.read()
    _write_file(dst, data, os.stat(src).st_mode & 0o7777)


def _fsync_dir(d: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _drop_pycache(full: str) -> None:
    """Stale bytecode: a same-second, same-size edit is otherwise not seen by Python."""
    d = os.path.join(os.path.dirname(full), "__pycache__")
    stem = os.path.basename(full)[:-3] if full.endswith(".py") else None
    if stem is None or not os.path.isdir(d):
        return
    for e in os.listdir(d):
        if e.startswith(stem + ".") and e.endswith(".pyc"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, e))


def _rmtree(path: str) -> None:
    if not os.path.isdir(path):
        return
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for n in filenames:
            os.unlink(os.path.join(dirpath, n))
        for n in dirnames:
            os.rmdir(os.path.join(dirpath, n))
    os.rmdir(path)
