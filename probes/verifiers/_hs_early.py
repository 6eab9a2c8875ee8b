"""The statistics of files that landed while the step still runs (issue 42, item 6): the
check waits at its gate for the step's end anyway, so it reads each settled file then and
keeps its per-layer profile (``_hs_stats.profile``, the costliest work per file) -- after
``go`` only the files it has not seen, or that changed since, are profiled again.

A file is *settled* when it was last written ``settle`` seconds ago (2 s): a file still being
written, or copied from a staging folder, is left for later. What makes a kept profile safe
to reuse is its file's (inode, size, mtime) read again after ``go``: a file written again
since -- in place or replaced -- gets another mtime (it was settled: its old one is at least
``settle`` seconds older than any rewrite), a new inode, or another size, and is read anew.

Torch works with one thread here: the step beside it (a server's CPU side) keeps the others.
Stdlib + torch; best effort -- any failure leaves the file to the check after ``go``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from _hs_read import FORMATS, Sample, _load_pt, _load_st
from _hs_stats import profile

#: seconds since a file's last write before it is read early
SETTLE = 2.0
#: layer positions asked of a file (each loader keeps those it holds)
EVERY = list(range(4096))

Key = tuple[int, int, int]  # (inode, size, mtime in ns)


def key_of(path: Path) -> Key | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Early:
    """Profiles of the settled files of ``data``, one file per :meth:`step`."""

    def __init__(self, data: Path, torch: Any, settle: float = SETTLE) -> None:
        self.data, self.torch, self.settle = data, torch, settle
        self.kept: dict[Path, tuple[Key, list]] = {}  # type: ignore[type-arg]
        self.todo: list[Path] = []
        self.seconds, self.reused, self.said = 0.0, 0, 0

    def _scan(self) -> None:
        """The settled files not profiled yet at their current key, lowest index first."""
        now, found = time.time(), []
        with contextlib.suppress(OSError):
            for e in os.scandir(self.data):
                prefix = next((p for p in FORMATS if e.name.startswith(p)), None)
                if prefix is None or not e.name.endswith(FORMATS[prefix]):
                    continue
                tail = e.name[len(prefix) : -len(FORMATS[prefix])]
                path = Path(e.path)
                k = key_of(path)
                if not tail.isdigit() or k is None or now - k[2] / 1e9 < self.settle:
                    continue
                if self.kept.get(path, (None,))[0] != k:
                    found.append((int(tail), path))
        self.todo = [p for _, p in sorted(found, reverse=True)]  # popped from the end

    def step(self) -> bool:
        """Profile one waiting file; False when none waits (the gate then sleeps a while)."""
        if not self.todo:
            self._scan()
            if not self.todo:
                if len(self.kept) != self.said:  # in the check's log: how far it got
                    self.said = len(self.kept)
                    print(f"verify: statistics of {self.said} files read while the step runs "
                          f"({self.seconds:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
                return False
        path = self.todo.pop()
        t0, threads = time.perf_counter(), self.torch.get_num_threads()
        self.torch.set_num_threads(1)
        try:
            k = key_of(path)
            s = Sample(0, path.name)
            load = _load_st if path.suffix == ".safetensors" else _load_pt
            load(path, s, EVERY, self.torch)
            if k is not None and k == key_of(path) and s.held and s.error is None:
                self.kept[path] = (k, profile([s.states[p] for p in range(s.held)]))
        except Exception:  # a cut or garbled file: the check after go says so
            pass
        finally:
            self.torch.set_num_threads(threads)
            self.seconds += time.perf_counter() - t0
        return True

    def profile_of(self, path: Path | None) -> list | None:  # type: ignore[type-arg]
        """The kept profile of ``path`` if the file is still what was read; else None."""
        got = self.kept.get(path) if path is not None else None
        if got is None or key_of(path) != got[0]:  # type: ignore[arg-type]
            return None
        self.reused += 1
        return got[1]
