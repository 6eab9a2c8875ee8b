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

import contextlib
import fcntl
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from probes._finder import Finder, ProbeFailure, default_paths, dist_files
from probes.patching._durable import (
    copy_file,
    drop_pycache,
    fsync_dir,
    keep_pycache,
    read_text,
    restore_pycache,
    rmtree,
    write_atomic,
    write_file,
)
from probes.patching._patch_read import Reader

PYC_KEPT = ".pyc-kept"  # beside a backup: the module's bytecode and mtime before the change
LOCK_WAIT_S = 1.0  # a second writer fails (naming the holder) after this long


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


class Ops(Reader):
    """The writing transaction (lock, journal, swaps, manifest) and the recovery of one that
    died halfway, over the read side's view of the dist."""

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
        write_atomic(os.path.join(self.state, "lock.json"), json.dumps(info).encode(), 0o644)
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
                rmtree(os.path.join(self.state, "txn"))
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
        rmtree(txn)
        os.makedirs(txn, mode=0o755)
        originals = {c["path"]: c["original_text"] for c in changes if "original_text" in c}
        for rel, full, cur, _data, mode in plan:
            if cur.get("exists"):
                copy_file(full, os.path.join(txn, rel))
                if rel not in (self.manifest().get("files") or {}):
                    # not patched by harness: the original is what is there now (not a backup
                    # a rolled-back transaction left), or the wheel's file make-patch sends
                    backup = os.path.join(self.state, "backups", rel)
                    if rel in originals:
                        write_atomic(backup, originals[rel].encode("utf-8"), mode)
                    else:
                        copy_file(full, backup)
                        keep_pycache(full, backup + PYC_KEPT)
        journal = {
            "pid": os.getpid(),
            "started": time.time(),
            "manifest_before": read_text(os.path.join(self.state, "manifest.json")),
            "files": [
                {"path": rel, "existed": bool(cur.get("exists")), "mode": cur.get("mode")}
                for rel, _f, cur, _d, _m in plan
            ],
        }
        write_atomic(os.path.join(self.state, "journal.json"), json.dumps(journal).encode(), 0o644)
        # 3. temp files next to their targets (same filesystem), then the swaps
        temps: list[tuple[str, str, str | None]] = []
        for rel, full, _cur, data, mode in plan:
            if data is None:
                temps.append((rel, full, None))
                continue
            beside = os.path.join(os.path.dirname(full), f".{os.path.basename(full)}.harness-tmp")
            write_file(beside, data, mode)
            temps.append((rel, full, beside))
        delay = float(os.environ.get("HARNESS_TEST_SWAP_DELAY", "0") or 0)
        for rel, full, tmp in temps:
            if tmp is None:
                os.unlink(full)
            else:
                os.replace(tmp, full)
            fsync_dir(os.path.dirname(full))
            drop_pycache(full)
            kept = (manifest or {}).get("files") or {}
            if tmp is not None and manifest is not None and rel not in kept:
                # reverted: the module has its original bytes again, so its bytecode too
                restore_pycache(full, os.path.join(self.state, "backups", rel) + PYC_KEPT)
            if delay:
                time.sleep(delay)  # lets fault tests kill us between two swaps
        # 4. manifest, then the journal goes: the transaction is committed
        if manifest is not None:
            self._save_manifest(manifest)
            if delay:
                time.sleep(delay)  # ... and between the manifest and the commit
        os.unlink(os.path.join(self.state, "journal.json"))
        fsync_dir(self.state)
        rmtree(txn)
        if manifest is not None and not (manifest.get("files") or {}):
            rmtree(os.path.join(self.state, "backups"))  # fully reverted: nothing to keep
        return {"written": [rel for rel, _f, _t in temps], "root": self.root}

    def _save_manifest(self, manifest: dict[str, Any]) -> None:
        path = os.path.join(self.state, "manifest.json")
        whole = self.whole_manifest()  # never an unreadable one rewritten as empty
        if manifest.get("files"):
            whole[self.dist] = manifest
        else:
            whole.pop(self.dist, None)
        write_atomic(path, json.dumps(whole, indent=1, sort_keys=True).encode(), 0o644)

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
                    write_atomic(full, data, entry.get("mode") or 0o644)
                    drop_pycache(full)
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
            elif read_text(mpath) != before:
                write_atomic(mpath, before.encode("utf-8"), 0o644)
        os.unlink(jpath)
        fsync_dir(self.state)
        rmtree(os.path.join(self.state, "txn"))
        return {"rolled_back": restored, "pid": journal.get("pid")}
