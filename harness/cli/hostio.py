"""Per-host output inside one process: each host's thread writes to its own stdout/stderr.

A command run across hosts runs its body once per host, concurrently, in this process (the
model is Fabric's ``Group``: one call, a result per host). What each host's body prints --
through ``print``, a Rich console (which looks up ``sys.stdout`` when it writes) or
``sys.stdout.buffer`` -- goes to that host's own sink: a buffer shown after the run
(:class:`Captured`), or the real stdout a line at a time with ``[host]`` in front
(:class:`Prefixed`). Threads that were not given a sink write where they always did.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any, TextIO, TypeVar

T = TypeVar("T")

_local = threading.local()


class _Routed(io.TextIOBase):
    """Stands in for ``sys.stdout``/``sys.stderr``: the calling thread's sink, else the real one."""

    def __init__(self, which: str, real: TextIO) -> None:
        self._which, self._real = which, real

    def _target(self) -> TextIO:
        sinks = getattr(_local, "sinks", None)
        return sinks[self._which] if sinks is not None else self._real

    def write(self, s: str) -> int:
        return self._target().write(s)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def fileno(self) -> int:
        return self._target().fileno()

    @property
    def buffer(self) -> Any:
        return self._target().buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._target().encoding


@contextmanager
def routed() -> Iterator[None]:
    """While inside, ``sys.stdout``/``sys.stderr`` follow the calling thread's sinks."""
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout = _Routed("out", real_out)
    sys.stderr = _Routed("err", real_err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = real_out, real_err


def _text(raw: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", write_through=True)


class Captured:
    """A host's stdout and stderr, kept apart, read once the host is done."""

    def __init__(self) -> None:
        self._out, self._err = io.BytesIO(), io.BytesIO()
        self.sinks = {"out": _text(self._out), "err": _text(self._err)}

    @property
    def out(self) -> str:
        return self._out.getvalue().decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self._err.getvalue().decode("utf-8", "replace")


class _PrefixLines(io.RawIOBase):
    """Bytes in, whole lines out to ``real`` with ``prefix`` in front (under ``lock``)."""

    def __init__(self, prefix: bytes, real: IO[bytes], lock: threading.Lock) -> None:
        self._prefix, self._real, self._lock = prefix, real, lock
        self._partial = b""
        self.muted = False

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = self._partial + bytes(b)
        *lines, self._partial = data.split(b"\n")
        if lines:
            with self._lock:
                if self.muted:
                    return len(b)
                for line in lines:
                    self._real.write(self._prefix + line + b"\n")
                self._real.flush()
        return len(b)

    def mute(self) -> None:
        with self._lock:  # no write of this host's is under way once it is taken
            self.muted = True

    def end(self) -> None:
        """The last line, even without its newline (given one: the next host's line starts
        on a line of its own)."""
        if self._partial:
            with self._lock:
                if self.muted:
                    return
                self._real.write(self._prefix + self._partial + b"\n")
                self._real.flush()
            self._partial = b""


class Prefixed:
    """A host's stdout and stderr together, to the real stdout line by line as ``[host] ``."""

    def __init__(self, host: str, real: IO[bytes], lock: threading.Lock) -> None:
        self._raw = _PrefixLines(f"[{host}] ".encode(), real, lock)
        self.sinks = {"out": _text(self._raw), "err": _text(self._raw)}  # type: ignore[arg-type]

    def end(self) -> None:
        self._raw.end()

    def mute(self) -> None:
        """Nothing more from this host: once this returns, its thread (a daemon, left
        running when the command ends) writes nothing more, so none is caught mid-write
        by the interpreter's exit."""
        self._raw.mute()


def on_each(hosts: Sequence[str], body: Callable[[str], T], sink: Callable[[str], Any]) -> list[T]:
    """``body(host)`` for every host at once, each thread writing to ``sink(host)``'s sinks
    (ended once the body returns); the results in ``hosts``' order. ``routed()`` must be
    active. The threads are daemons: a Ctrl-C here (raised in the main thread, which only
    waits) leaves them to end with the process, as the hosts' steps keep running."""
    results: dict[str, T] = {}
    errors: dict[str, BaseException] = {}

    def one(host: str) -> None:
        s = sink(host)
        _local.sinks = s.sinks
        try:
            results[host] = body(host)
        except BaseException as exc:  # re-raised in the caller's thread
            errors[host] = exc
        finally:
            for stream in s.sinks.values():
                stream.flush()
            if hasattr(s, "end"):
                s.end()
            _local.sinks = None

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.2)
    for h in hosts:
        if h in errors:
            raise errors[h]
    return [results[h] for h in hosts]
