"""A step's disk budget: what it will write (``disk = {...}`` in its entry) against the free
space of the filesystem that will hold it, read on the target before it launches. Pure: the
numbers come from ``probes/verifiers/_disk_budget.py`` run by the step's own interpreter.

A hidden-states file keeps every token's states at each captured layer: 7,168 x 4 layers x
2 B = 57 KB per token for a DeepSeek-V3 verifier, 7.5 GB for a 128k-token sample -- an
hours-long step that fills the disk late is the failure this refuses up front.
:func:`count` asks the target (the launch's disk gate and ``harness report STEP`` alike).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import RunError
from harness.runs.record.written import Progress
from harness.targets.base import Target


def size(n: float) -> str:
    """``7.5 GB``, ``2.0 MB``, ``512 B`` (decimal units, as ``df -H``)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


@dataclass(frozen=True)
class Budget:
    """The estimate and the room for it, as the target read them."""

    samples: int
    tokens: int
    layers: int
    hidden: int
    format: str
    per_token: int
    need: int
    free: int
    out: str
    fs: str  # the folder whose filesystem was measured (out, or its nearest existing parent)
    staging: str | None = None
    staging_other_fs: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Budget:
        return cls(
            samples=int(d["samples"]),
            tokens=int(d["tokens"]),
            layers=int(d["layers"]),
            hidden=int(d["hidden"]),
            format=str(d["format"]),
            per_token=int(d["per_token"]),
            need=int(d["bytes"]),
            free=int(d["free"]),
            out=str(d["out"]),
            fs=str(d["fs"]),
            staging=d.get("staging"),
            staging_other_fs=bool(d.get("staging_other_fs")),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "tokens": self.tokens,
            "layers": self.layers,
            "hidden": self.hidden,
            "format": self.format,
            "per_token": self.per_token,
            "bytes": self.need,
            "free": self.free,
            "out": self.out,
            "fs": self.fs,
            "staging": self.staging,
            "staging_other_fs": self.staging_other_fs,
        }

    @property
    def fits(self) -> bool:
        return self.need <= self.free

    def words(self) -> str:
        """``will write 7.5 GB to /data/hs (1,024 samples, 131,072 tokens x 4 layers x 7168
        x 2 B); 2.0 MB free there``."""
        how = f"{self.layers} layers x {self.hidden} x {self.format}"
        return (
            f"will write {size(self.need)} to {self.out} ({self.samples:,} samples, "
            f"{self.tokens:,} tokens x {how}); {size(self.free)} free there"
        )

    def warnings(self) -> list[str]:
        if self.staging and self.staging_other_fs:
            return [
                f"the staging folder {self.staging} is on another filesystem than {self.out}: "
                "each file is copied, not moved (twice the writes); put both on one filesystem"
            ]
        return []


def refusal(step: str, budget: Budget) -> tuple[str, str] | None:
    """(message, hint) when the step's outputs will not fit; None when they do."""
    if budget.fits:
        return None
    return (
        f"{step} {budget.words()}: it will not fit ({size(budget.need - budget.free)} short)",
        f"free space on {budget.fs}'s filesystem, or point the output elsewhere "
        f"(--set ...); --force runs it anyway",
    )


def progress_words(p: Progress) -> str:
    """`` · 120/5,000 samples · 10,240 tokens/s · ETA 6:46:40 · 7.5 GB written``: a running
    step's progress.json as ``harness runs`` shows it beside its state."""
    clock = "?"
    if p.eta is not None:
        s = int(p.eta)
        clock = f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return (
        f" · {p.done:,}/{p.total:,} samples · {p.tokens_per_s:,.0f} tokens/s · ETA {clock} · "
        f"{size(float(p.bytes))} written" + (p.server.words() if p.server else "")
    )


def count(target: Target, spec: Mapping[str, str], python: str | None, step: str) -> Budget:
    """The resolved ``disk = {...}`` of ``step`` counted on ``target`` by the step's own
    interpreter (``python``; it reads the prepared dataset with its ``datasets``).

    Raises:
        RunError: the target could not count it (the script's own last line says why).
    """
    from harness.probe_files import disk_budget_source

    code = disk_budget_source().replace('if __name__ == "__main__":', "if True:")  # run as -c
    got = target.run_python(code, json.dumps(dict(spec)).encode(), timeout=600, python=python)
    text = got.stdout.decode("utf-8", "replace").strip()
    if not got.ok or not text:
        said = got.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RunError(
            f"{step}: its disk budget could not be read on {target.label}: "
            + (said[-1] if said else f"exit {got.exit_code}"),
            "check the step's disk = {...} (prepared, model/hidden) or run with --force",
        )
    return Budget.from_dict(json.loads(text.splitlines()[-1]))
