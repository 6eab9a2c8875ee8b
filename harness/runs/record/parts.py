"""The typed parts of ``run.json``: a smoke run's plan, a run's place among several hosts, the
fingerprint of what it ran on, a service step's settings and the services a step needs.

``run.json`` is read back for days -- by ``harness runs``, by later harness versions, by the
``--require-smoke`` / ``--require-verified`` fingerprints -- so each part is a frozen model,
built once where the launch decides it and serialised only where the record is written
(:func:`harness.runs.target.remote.launch`). ``to_dict`` writes the very JSON harness always wrote
(keys absent stay absent); ``from_dict`` reads any earlier harness's (a missing or malformed
field becomes its default, never a traceback), and the two are exact inverses (the
round-trip tests and ``tests/fixtures/runs_main/``, run directories written by an earlier
main, pin both). A new field is one attribute here, one key in ``to_dict`` and one read in
``from_dict``; readers of an older record get its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.vocab import Word

Wire = dict[str, Any]  # a record part's JSON object: what to_dict writes and from_dict reads


def _str(v: object) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _float(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _strs(v: object) -> tuple[str, ...]:
    return tuple(str(x) for x in v) if isinstance(v, (list, tuple)) else ()


def _obj(v: object) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


class Role(Word):
    """A run's part in a run spread over hosts: the step itself, or a node of the Ray cluster
    the run owns (``harness runs -t GROUP`` folds those into the step's row)."""

    cluster: bool

    STEP = ("step",)
    RAY_HEAD = ("ray-head", True)
    RAY_NODE = ("ray-node", True)


@dataclass(frozen=True)
class Fingerprint:
    """What a run was started on: the dists' versions, each series' applied patches and (for a
    real run) the digest of its pipeline.toml entry -- what a green run vouches for.
    ``services``: a served step's servers' own (dists and patches, per service step), read in
    each server's interpreter: the step's own never sees the server's vLLM."""

    dists: Mapping[str, str] = field(default_factory=dict)
    patches: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    entry: str | None = None
    services: Mapping[str, Fingerprint] = field(default_factory=dict)

    @classmethod
    def of(
        cls, dists: Mapping[str, str | None], applied: Mapping[str, Any], entry: str | None = None
    ) -> Fingerprint:
        """From the review's parts: the dists present, each series' patches sorted."""
        present = {k: v for k, v in sorted(dists.items()) if v}
        return cls(present, {d: tuple(sorted(ids)) for d, ids in applied.items()}, entry)

    def environment(self) -> Fingerprint:
        """Its dists and patches alone: what a service's run vouches for to its users."""
        return Fingerprint(self.dists, self.patches)

    def changes_since(self, then: Fingerprint) -> list[str]:
        """Pure: what differs from ``then``, in words (empty: nothing changed)."""
        out = []
        for name in sorted(set(then.dists) | set(self.dists)):
            a, b = then.dists.get(name), self.dists.get(name)
            if a != b:
                out.append(f"{name} {a or 'absent'} -> {b or 'absent'}")
        for dist in sorted(set(then.patches) | set(self.patches)):
            old, new = set(then.patches.get(dist, ())), set(self.patches.get(dist, ()))
            out += [f"{dist} patch {p} applied since" for p in sorted(new - old)]
            out += [f"{dist} patch {p} no longer applied" for p in sorted(old - new)]
        if then.entry and self.entry and then.entry != self.entry:
            out.append("its pipeline.toml entry changed")
        for name in sorted(set(then.services) | set(self.services)):  # a served step's servers
            if name not in then.services:
                out.append(f"its service {name}'s environment was not recorded then")
            elif name not in self.services:
                out.append(f"its service {name}'s environment could not be read now")
            else:
                was = then.services[name]
                out += [f"service {name}: {c}" for c in self.services[name].changes_since(was)]
        return out

    def to_dict(self) -> Wire:
        out: Wire = {
            "dists": dict(self.dists),
            "patches": {d: list(ids) for d, ids in self.patches.items()},
        }
        if self.entry is not None:
            out["entry"] = self.entry
        if self.services:
            out["services"] = {name: fp.to_dict() for name, fp in self.services.items()}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Fingerprint:
        dists = {str(k): v for k, v in _obj(d.get("dists")).items() if isinstance(v, str)}
        patches = {str(k): _strs(v) for k, v in _obj(d.get("patches")).items()}
        services = {
            str(k): cls.from_dict(v)
            for k, v in _obj(d.get("services")).items()
            if isinstance(v, Mapping)
        }
        return cls(dists, patches, _str(d.get("entry")), services)


@dataclass(frozen=True)
class SmokeRecord:
    """A smoke run's plan as recorded (``run.json`` ``smoke``; ``None``: a real run): the
    layers and samples it was cut to, and the fingerprint its green result vouches for."""

    layers: int
    samples: int | None = None
    fingerprint: Fingerprint | None = None

    def to_dict(self) -> Wire:
        out: Wire = {"layers": self.layers, "samples": self.samples}
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SmokeRecord:
        fp = d.get("fingerprint")
        return cls(
            _int(d.get("layers")) or 0,
            _int(d.get("samples")),
            Fingerprint.from_dict(fp) if isinstance(fp, Mapping) else None,
        )


@dataclass(frozen=True)
class GroupRecord:
    """A run spread over hosts (``run.json`` ``group``): the group's id (the step's run id on
    every host), its spread and hosts; per record, this host's rank and role, and the runs
    of the Ray cluster the group owns once it is up."""

    id: str
    spread: str | None = None
    hosts: tuple[str, ...] = ()
    rank: int | None = None
    role: Role | None = None
    cluster: tuple[str, ...] | None = None

    def to_dict(self) -> Wire:
        out: Wire = {"id": self.id, "spread": self.spread, "hosts": list(self.hosts)}
        if self.cluster is not None:
            out["cluster"] = list(self.cluster)
        if self.rank is not None:
            out["rank"] = self.rank
        if self.role is not None:
            out["role"] = self.role.value
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GroupRecord:
        role = str(d.get("role"))
        return cls(
            str(d.get("id") or ""),
            _str(d.get("spread")),
            _strs(d.get("hosts")),
            _int(d.get("rank")),
            Role(role) if role in {r.value for r in Role} else None,
            _strs(d["cluster"]) if isinstance(d.get("cluster"), list) else None,
        )


@dataclass(frozen=True)
class ServiceRecord:
    """A service step's settings, resolved (``run.json`` ``service``): its port, health URL
    and time limit; ``unclaimed_minutes`` when the step sets it (else the run program's
    default); ``digest``: what makes a live run of it reusable
    (:mod:`harness.runs.pipeline.digest`)."""

    port: int
    url: str
    ready_timeout: float
    unclaimed_minutes: float | None = None
    digest: str | None = None

    def settings(self) -> Wire:
        """What it serves, for the digest: no digest, no time it waits for a first user."""
        return {"port": self.port, "url": self.url, "ready_timeout": self.ready_timeout}

    def to_dict(self) -> Wire:
        out = self.settings()
        if self.unclaimed_minutes is not None:
            out["unclaimed_minutes"] = self.unclaimed_minutes
        if self.digest is not None:
            out["digest"] = self.digest
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ServiceRecord:
        return cls(
            _int(d.get("port")) or 0,
            str(d.get("url") or ""),
            _float(d.get("ready_timeout")) or 0.0,
            _float(d.get("unclaimed_minutes")),
            _str(d.get("digest")),
        )


@dataclass(frozen=True)
class NeededService:
    """A service a step needs (``run.json`` ``services``): the run serving it, and whether it
    outlives the step (``--keep-service``); the step's supervisor stops the others."""

    step: str
    run_id: str
    keep: bool = False

    def to_dict(self) -> Wire:
        return {"step": self.step, "run_id": self.run_id, "keep": self.keep}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NeededService:
        return cls(str(d.get("step") or ""), str(d.get("run_id") or ""), bool(d.get("keep")))


def needed_from(v: object) -> tuple[NeededService, ...] | None:
    """``run.json`` ``services`` (``None``: a step that needs none)."""
    if not isinstance(v, list):
        return None
    return tuple(NeededService.from_dict(s) for s in v if isinstance(s, Mapping))
