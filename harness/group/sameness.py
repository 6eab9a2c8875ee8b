"""Whether several hosts are the same where a multi-node run needs them to be (pure).

A torchrun job or a Ray cluster over nodes with different torch, NCCL or CUDA, another Python,
another patch state or GPU count fails late and strangely (a hang in the first all-reduce, a
pickling error between workers). These are compared host by host and every difference is a
blocker that names each node and its value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from harness.models import TargetFacts

NCCL_DISTS = ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11")


def _nccl(f: TargetFacts) -> str | None:
    for name in NCCL_DISTS:
        if f.dists.get(name):
            return f"{name.rsplit('-', 1)[-1]} {f.dists[name]}"
    return None


#: (what, how it is read from a host's facts); every one of them breaks a multi-node run
FACTS: tuple[tuple[str, Callable[[TargetFacts], str | None]], ...] = (
    ("python", lambda f: f.python.get("version")),
    ("torch", lambda f: f.dists.get("torch")),
    ("vllm", lambda f: f.dists.get("vllm")),
    ("speculators", lambda f: f.dists.get("speculators")),
    ("transformers", lambda f: f.dists.get("transformers")),
    ("NCCL", _nccl),
    ("CUDA driver", lambda f: f.gpus[0].driver if f.gpus and f.gpus[0].driver else None),
    ("GPUs", lambda f: str(len(f.gpus))),
)


@dataclass(frozen=True)
class Row:
    what: str
    values: Mapping[str, str | None]  # host -> value (None: not there)

    @property
    def differs(self) -> bool:
        return len(set(self.values.values())) > 1


@dataclass(frozen=True)
class Sameness:
    hosts: tuple[str, ...]
    rows: tuple[Row, ...]

    @property
    def blockers(self) -> list[str]:
        return [
            f"{r.what} differs across hosts: "
            + ", ".join(f"{h} {r.values[h] or 'absent'}" for h in self.hosts)
            for r in self.rows
            if r.differs
        ]


def compare(
    facts: Mapping[str, TargetFacts],
    extra_dists: Sequence[str] = (),
    extra: Mapping[str, Mapping[str, str | None]] | None = None,
) -> Sameness:
    """``facts``: host -> its facts. ``extra``: more rows already read per host (e.g. the
    patch series' state: ``{"speculators series": {"gpu1": "0001-0012 applied"...}}``)."""
    hosts = tuple(facts)
    rows = [Row(what, {h: get(facts[h]) for h in hosts}) for what, get in FACTS]
    rows += [Row(d, {h: facts[h].dists.get(d) for h in hosts}) for d in extra_dists]
    for what, per_host in (extra or {}).items():
        rows.append(Row(what, {h: per_host.get(h) for h in hosts}))
    # a fact no host has (no vLLM anywhere) is no difference and no line
    return Sameness(hosts, tuple(r for r in rows if any(v is not None for v in r.values.values())))
