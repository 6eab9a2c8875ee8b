"""What the run program writes into a run directory besides ``run.json``, typed: a service's
``ready.json``, a budgeted step's ``progress.json`` and, in ``status.json``, the disk that was
full when the step ended.

Read once where the runs probe's answer arrives
(:meth:`harness.runs.record.models.RunInfo.from_facts`);
``to_dict`` writes back the JSON the run program wrote, key for key (``--json`` shows it), and
anything malformed reads as ``None``, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.runs.record.parts import Wire

#: JSON harness carries through without reading it (the stop reports of the services a step
#: stopped when it ended: ``probes/runs/_service.stop_services``).
Opaque = Mapping[str, object]


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Ready:
    """``ready.json``: the service's health URL answered 200, ``seconds`` after it started."""

    url: str = ""
    ready_at: float | None = None
    seconds: float | None = None

    def to_dict(self) -> Wire:
        return {"url": self.url, "ready_at": self.ready_at, "seconds": self.seconds}

    @classmethod
    def read(cls, v: object) -> Ready | None:
        if not isinstance(v, Mapping):
            return None
        url = v.get("url")
        return cls(
            url if isinstance(url, str) else "", _num(v.get("ready_at")), _num(v.get("seconds"))
        )


@dataclass(frozen=True)
class DiskFull:
    """``status.json`` ``disk_full``: the run directory's disk was full when the step ended."""

    path: str
    space_left: int | None = None

    def to_dict(self) -> Wire:
        return {"path": self.path, "space_left": self.space_left}

    @classmethod
    def read(cls, v: object) -> DiskFull | None:
        if not isinstance(v, Mapping):
            return None
        return cls(str(v.get("path") or ""), _int(v.get("space_left")))


@dataclass(frozen=True)
class ServerLoad:
    """``progress.json``'s ``server``: what the step's service counts at its ``/metrics``
    (``probes/runs/_metrics.py``): prompt tokens per second since the previous look, requests
    running, waiting and finished; None where the server does not say."""

    prompt_tokens_per_s: float | None = None
    running: int | None = None
    waiting: int | None = None
    finished: int | None = None

    def to_dict(self) -> Wire:
        out = {
            "prompt_tokens_per_s": self.prompt_tokens_per_s,
            "running": self.running,
            "waiting": self.waiting,
            "finished": self.finished,
        }
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def read(cls, v: object) -> ServerLoad | None:
        if not isinstance(v, Mapping) or not v:
            return None
        return cls(
            _num(v.get("prompt_tokens_per_s")),
            _int(v.get("running")),
            _int(v.get("waiting")),
            _int(v.get("finished")),
        )

    def words(self) -> str:
        """`` · server 41,000 prompt tokens/s, 32 running, 180 waiting``."""
        rate = self.prompt_tokens_per_s
        bits = [] if rate is None else [f"{rate:,.0f} prompt tokens/s"]
        for word, n in (("running", self.running), ("waiting", self.waiting)):
            if n is not None:
                bits.append(f"{n:,} {word}")
        return f" · server {', '.join(bits)}" if bits else ""


@dataclass(frozen=True)
class Progress:
    """``progress.json`` (``probes/runs/_fill.py``): a budgeted step's samples done of
    ``total``, the bytes and tokens written, the rate, and the time left (``None``: unknown)."""

    done: int
    total: int
    bytes: int = 0
    tokens: int = 0
    tokens_per_s: float = 0.0
    elapsed: float = 0.0
    eta: float | None = None
    at: float | None = None  # when it was written (the target's clock)
    server: ServerLoad | None = None  # a served step: what its server counts

    def to_dict(self) -> Wire:
        out: dict[str, Any] = {
            "done": self.done, "total": self.total, "bytes": self.bytes, "tokens": self.tokens,
            "tokens_per_s": self.tokens_per_s, "elapsed": self.elapsed, "eta": self.eta,
        }  # fmt: skip
        if self.at is not None:
            out["at"] = self.at
        if self.server is not None:
            out["server"] = self.server.to_dict()
        return out

    @classmethod
    def read(cls, v: object) -> Progress | None:
        if not isinstance(v, Mapping):
            return None
        done, total = _int(v.get("done")), _int(v.get("total"))
        if done is None or total is None:
            return None
        return cls(
            done,
            total,
            _int(v.get("bytes")) or 0,
            _int(v.get("tokens")) or 0,
            _num(v.get("tokens_per_s")) or 0.0,
            _num(v.get("elapsed")) or 0.0,
            _num(v.get("eta")),
            _num(v.get("at")),
            ServerLoad.read(v.get("server")),
        )
