"""Read the two callee versions a fix is decided on: one ``locate`` probe run per side.

The installed side is the check's own target (with the series' texts overlaid, as checked);
the old side is the baseline the check compared with, from its PyPI wheels. Both run at once.
Payloads are parsed here, once, into :class:`~harness.fixing.model.Side`.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.findings import Category, Finding
from harness.fixing.model import Json, ModuleDefs, Side
from harness.fixing.rules.base import imported_name
from harness.models import Symbol
from harness.probe_runner import run_probe
from harness.targets.base import Target


@dataclass(frozen=True)
class Wanted:
    """What the findings make us ask each side."""

    refs: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    names: frozenset[str] = field(default_factory=frozenset)  # where is NAME defined now?
    modules: frozenset[tuple[str, str]] = field(default_factory=frozenset)  # (home, via)

    def __or__(self, other: Wanted) -> Wanted:
        return Wanted(
            self.refs | other.refs, self.names | other.names, self.modules | other.modules
        )

    def __sub__(self, other: Wanted) -> Wanted:
        return Wanted(
            self.refs - other.refs, self.names - other.names, self.modules - other.modules
        )

    def __bool__(self) -> bool:
        return bool(self.refs or self.names or self.modules)


#: The categories a rule can fix; the others need no facts (their manual entry is the
#: finding's own signature and location).
FIXABLE = frozenset(
    {
        Category.IMPORT_MISSING,
        Category.UNBOUND_NAME,
        Category.UNEXPECTED_KWARG,
        Category.ARGUMENT_SHIFTED,
    }
)


def wanted(findings: Iterable[Finding]) -> Wanted:
    """Pure: the symbols the rules look at for these findings, and the names of failed
    imports (where is each defined now?)."""
    refs: set[tuple[str, str]] = set()
    names: set[str] = set()
    for f in findings:
        module, _, qual = f.symbol.partition(":")
        if qual and f.category in FIXABLE:
            refs.add((module, qual))
        got = imported_name(f)
        if got is not None:
            names.add(got[1])
    return Wanted(frozenset(refs), frozenset(names))


def homes(findings: Iterable[Finding], old: Side, new: Side) -> Wanted:
    """Pure: module listings a rename needs -- the old home of each failed import's name
    that is defined nowhere else now (a moved name is no rename). Asked once the old side
    has said where each name lived."""
    modules: set[tuple[str, str]] = set()
    for f in findings:
        got = imported_name(f)
        sym = old.symbols.get(f.symbol) if got is not None else None
        if got is None or sym is None:
            continue
        if not [s for s in new.defined.get(got[1], ()) if s.module != got[0]]:
            modules.add((sym.module, got[0]))
    return Wanted(modules=frozenset(modules))


def _symbol(raw: Json) -> Symbol:
    return Symbol.from_dict(raw)


def parse_side(label: str, data: Json) -> Side:
    """Pure: one ``locate`` payload -> a Side (found symbols only)."""
    symbols: dict[str, Symbol] = {}
    reads: dict[str, frozenset[str] | None] = {}
    for key, got in (data.get("symbols") or {}).items():
        if got.get("found") and got.get("symbol"):
            symbols[key] = _symbol(got["symbol"])
            if "reads" in got:
                r = got["reads"]
                reads[key] = None if r is None else frozenset(r)
    defined = {
        name: tuple(_symbol(s) for s in syms) for name, syms in (data.get("defined") or {}).items()
    }
    modules: dict[str, ModuleDefs] = {}
    for name, m in (data.get("modules") or {}).items():
        if m is None:
            continue
        defs = {n: _symbol(s) for n, s in (m.get("defs") or {}).items()}
        modules[name] = ModuleDefs(
            frozenset(m.get("names") or defs),
            defs,
            {v: frozenset(ns) for v, ns in (m.get("exported") or {}).items()},
        )
    return Side(label, symbols, reads, defined, modules)


def merge(a: Side, b: Side) -> Side:
    """Pure: everything two reads of one side learned (``b`` wins on a key both hold)."""
    mods = dict(a.modules)
    for k, m in b.modules.items():
        mine = mods.get(k)
        mods[k] = (
            m
            if mine is None
            else ModuleDefs(m.names, {**mine.defs, **m.defs}, {**mine.exported, **m.exported})
        )
    return Side(
        a.label,
        {**a.symbols, **b.symbols},
        {**a.reads, **b.reads},
        {**a.defined, **b.defined},
        mods,
    )


def _args(
    want: Wanted,
    tops: list[str],
    reads: bool,
    overrides: dict[str, str],
    skip: Side | None = None,
) -> dict[str, Any]:
    by_home: dict[str, list[str]] = {}
    for home, via in sorted(want.modules):
        by_home.setdefault(home, []).append(via)
    known = skip.modules if skip is not None else {}
    args: dict[str, Any] = {
        "tops": tops,
        "names": sorted(want.names),
        "modules": [
            [h, vias, sorted(known[h].names) if h in known else []]
            for h, vias in sorted(by_home.items())
        ],
        "refs": sorted([m, q] for m, q in want.refs),
        "reads": reads,
    }
    if overrides:
        args["overrides"] = overrides
    return args


def read_side(
    t: Target,
    want: Wanted,
    tops: list[str],
    label: str,
    *,
    reads: bool = False,
    overrides: dict[str, str] | None = None,
    skip: Side | None = None,
) -> Side:
    """One ``locate`` run; ``skip``: a side whose module listings need not be described again
    (the names a module had before are no rename candidates)."""
    if not want:
        return Side(label)
    env = run_probe(t, "locate", _args(want, tops, reads, overrides or {}, skip), cache=True)
    return parse_side(label, env.data)


def read_sides(
    new_target: Target,
    old_target: Target,
    want_new: Wanted,
    want_old: Wanted,
    tops: list[str],
    labels: tuple[str, str],
    overrides: dict[str, str],
) -> tuple[Side, Side]:
    """One ``locate`` run on each side, at once (they are separate processes or links)."""

    with ThreadPoolExecutor(max_workers=2) as pool:
        old = pool.submit(read_side, old_target, want_old, tops, labels[0], reads=True)
        new = pool.submit(read_side, new_target, want_new, tops, labels[1], overrides=overrides)
        return old.result(), new.result()


class Reader:
    """Both sides as the rounds learn them: each ref, name and module asked once per side."""

    def __init__(
        self,
        new_target: Target,
        old_target: Target,
        tops: list[str],
        labels: tuple[str, str],
        overrides: dict[str, str],
    ) -> None:
        self.targets = (old_target, new_target)
        self.tops = tops
        self.overrides = overrides
        self.old, self.new = Side(labels[0]), Side(labels[1])
        self.asked_old, self.asked_new = Wanted(), Wanted()

    def learn(self, pending: list[Finding], moved_from: dict[str, str]) -> None:
        """What the rules need for ``pending``: symbols on both sides (the old one under the
        key it had before an earlier fix re-pointed it), then the module listings a rename
        needs -- old first, so the new listing describes only names that are new."""
        old_t, new_t = self.targets
        want = wanted(pending) - self.asked_new
        olds = Wanted(
            refs=frozenset(_split(moved_from.get(f"{m}:{q}", f"{m}:{q}")) for m, q in want.refs)
        )
        olds = olds - self.asked_old
        o, n = read_sides(new_t, old_t, want, olds, self.tops, self.labels, self.overrides)
        self.old, self.new = merge(self.old, o), merge(self.new, n)
        self.asked_old, self.asked_new = self.asked_old | olds, self.asked_new | want
        more = homes(pending, self.old, self.new) - self.asked_new
        if more:
            self.old = merge(self.old, read_side(old_t, more, self.tops, self.labels[0]))
            n = read_side(
                new_t, more, self.tops, self.labels[1], overrides=self.overrides, skip=self.old
            )
            self.new = merge(self.new, n)
            self.asked_old, self.asked_new = self.asked_old | more, self.asked_new | more

    @property
    def labels(self) -> tuple[str, str]:
        return self.old.label, self.new.label

    def relabel(self, new_label: str) -> None:
        from dataclasses import replace

        self.new = replace(self.new, label=new_label)

    def seed(self, key: str, sym: Symbol) -> None:
        """A symbol a fix re-pointed a use to, as the listing described it: the next round's
        rules read it without asking the target again."""
        if key not in self.new.symbols:
            self.new = merge(self.new, Side(self.new.label, symbols={key: sym}))
            m, _, q = key.partition(":")
            self.asked_new = self.asked_new | Wanted(refs=frozenset({(m, q)}))


def _split(key: str) -> tuple[str, str]:
    m, _, q = key.partition(":")
    return m, q
