"""How one symbol's API moved between two versions -- pure, over :class:`~harness.models.Symbol`.

Kinds follow griffe's breaking-change vocabulary where one exists, so a reader who knows
griffe reads these at once; we add the ones a caller needs (method added: a new protocol step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.models import Parameter, Symbol, SymbolKind, after_self
from harness.vocab import Word


class ChangeKind(Word):
    """One way a symbol's API can move: its text (a template over ``{what}`` -- the quoted
    name, or "it" --, ``{name}``, ``{old}``, ``{new}``), whether it breaks a caller, and
    whether ``harness diff`` lists it by default (annotation and default respellings are
    left out). The last two are drift kinds of ``harness check``, never made by the
    comparison; the rule that finds them words their text."""

    breaking: bool
    listed: bool
    template: str

    PARAMETER_ADDED = ("parameter-added", False, True, "new optional parameter {what} (= {new})")
    PARAMETER_ADDED_REQUIRED = (
        "parameter-added-required",
        True,
        True,
        "new required parameter {what}",
    )
    PARAMETER_REMOVED = ("parameter-removed", True, True, "parameter {what} removed")
    PARAMETER_RENAMED = (
        "parameter-renamed",
        True,
        True,
        "parameter '{old}' renamed to '{new}'",
    )
    PARAMETER_MADE_REQUIRED = (
        "parameter-made-required",
        True,
        True,
        "parameter {what} lost its default ({old})",
    )
    PARAMETER_DEFAULT_CHANGED = (
        "parameter-default-changed",
        False,
        False,
        "default of {what}: {old} -> {new}",
    )
    PARAMETER_KIND_CHANGED = (
        "parameter-kind-changed",
        True,
        True,
        "parameter {what} is now {new} (was {old})",
    )
    PARAMETER_MOVED = (
        "parameter-moved",
        True,
        True,
        "parameter {what} moved from position {old} to {new}",
    )
    PARAMETER_ANNOTATION_CHANGED = (
        "parameter-annotation-changed",
        False,
        False,
        "annotation of {what}: {old} -> {new}",
    )
    RETURNS_CHANGED = ("returns-changed", True, True, "return annotation: {old} -> {new}")
    METHOD_ADDED = ("method-added", False, True, "new method {what}")
    METHOD_REMOVED = ("method-removed", True, True, "method {what} removed")
    CONSTRUCTOR_CHANGED = (
        "constructor-changed",
        False,
        True,
        "constructor now made by {new} (was {old})",
    )
    MOVED = ("moved", False, False, "moved from {old} to {new}")
    KIND_CHANGED = ("kind-changed", False, True, "was a {old}, now a {new}")
    # drift kinds (harness check)
    RETURNS_BEHAVIOUR_CHANGED = (
        "returns-behaviour-changed",
        True,
        False,
        "returns {new} (was {old})",
    )
    ATTRIBUTE_REMOVED = ("attribute-removed", True, False, "{name} gone")

    @property
    def about_parameter(self) -> bool:
        """A change to one parameter (reported at every call it touches)."""
        return str(self.value).startswith("parameter")


@dataclass(frozen=True)
class Change:
    """How one symbol moved. ``text`` replaces the kind's template where a rule words it
    itself (drift kinds); ``classes``: the classes an ``attribute-removed`` concerns."""

    kind: ChangeKind
    name: str  # the parameter / method concerned ("" for the symbol itself)
    old: str | None
    new: str | None
    text: str | None = None
    classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ChangeKind(self.kind))

    @property
    def breaking(self) -> bool:
        return self.kind.breaking

    def describe(self) -> str:
        if self.text is not None:
            return self.text
        what = f"'{self.name}'" if self.name else "it"
        return self.kind.template.format(what=what, name=self.name, old=self.old, new=self.new)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "name": self.name,
            "old": self.old,
            "new": self.new,
            "breaking": self.breaking,
            "text": self.describe(),
        }
        if self.classes:
            out["classes"] = list(self.classes)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Change:
        plain = cls(ChangeKind(d["kind"]), d.get("name", ""), d.get("old"), d.get("new"))
        text = d.get("text")
        return replace(
            plain,
            text=None if text is None or text == plain.describe() else text,
            classes=tuple(d.get("classes") or ()),
        )

    def __getitem__(self, key: str) -> Any:
        """Read a change like its JSON record (``change["kind"]``)."""
        return self.to_dict()[key]


def normalize_annotation(text: str | None) -> str | None:
    """Spelling-insensitive form: ``Optional[X]``, ``Union[X, None]`` and ``X | None`` agree.

    Version bumps often only modernise annotations (pyupgrade); that is not an API change.
    """
    if not text:
        return None
    import ast

    try:
        node = ast.parse(text.strip().strip("'\""), mode="eval").body
    except SyntaxError:
        return text.replace(" ", "")

    def norm(n: ast.AST) -> str:
        members = _union_members(n)
        if len(members) > 1:
            return "|".join(sorted({norm(m) for m in members}))
        if isinstance(n, ast.Subscript):
            head = norm(n.value)
            inner = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            return f"{head}[{','.join(norm(e) for e in inner)}]"
        if (
            isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id in ("typing", "typing_extensions", "t")
        ):
            return _BUILTIN_ALIASES.get(n.attr, n.attr)
        if isinstance(n, ast.Name):
            return _BUILTIN_ALIASES.get(n.id, n.id)
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            try:
                return norm(ast.parse(n.value, mode="eval").body)
            except SyntaxError:
                return n.value
        return ast.unparse(n).replace(" ", "")

    return norm(node)


_BUILTIN_ALIASES = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Type": "type",
}


def _union_members(n: Any) -> list[Any]:
    import ast

    if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
        return _union_members(n.left) + _union_members(n.right)
    if isinstance(n, ast.Subscript):
        head = ast.unparse(n.value).split(".")[-1]
        if head == "Union":
            elts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            return [m for e in elts for m in _union_members(e)]
        if head == "Optional":
            return [*_union_members(n.slice), ast.Constant(None)]
    return [n]


def _params(sym: Symbol) -> tuple[Parameter, ...]:
    params = sym.parameters or ()
    if sym.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD, SymbolKind.PROPERTY) and params:
        params = after_self(params)  # self/cls never changes meaning
    return params


def compare_parameters(old: Sequence[Parameter], new: Sequence[Parameter]) -> list[Change]:
    """Parameter-level changes, keyed by name (a rename shows as removed + added)."""
    out: list[Change] = []
    o_by = {p.name: (i, p) for i, p in enumerate(old)}
    n_by = {p.name: (i, p) for i, p in enumerate(new)}
    for name, (i, p) in o_by.items():
        if name not in n_by:
            out.append(Change(ChangeKind.PARAMETER_REMOVED, name, p.annotation, None))
            continue
        j, q = n_by[name]
        if p.kind != q.kind:
            out.append(Change(ChangeKind.PARAMETER_KIND_CHANGED, name, p.kind.value, q.kind.value))
        elif not p.kind.variadic and i != j and "positional" in p.kind:
            out.append(Change(ChangeKind.PARAMETER_MOVED, name, str(i), str(j)))
        if p.default is not None and q.default is None and not q.kind.variadic:
            out.append(Change(ChangeKind.PARAMETER_MADE_REQUIRED, name, p.default, None))
        elif p.default is not None and q.default not in (None, p.default):
            out.append(Change(ChangeKind.PARAMETER_DEFAULT_CHANGED, name, p.default, q.default))
        if normalize_annotation(p.annotation) != normalize_annotation(q.annotation):
            out.append(
                Change(ChangeKind.PARAMETER_ANNOTATION_CHANGED, name, p.annotation, q.annotation)
            )
    for name, (_, q) in n_by.items():
        if name in o_by:
            continue
        required = q.default is None and not q.kind.variadic
        kind = ChangeKind.PARAMETER_ADDED_REQUIRED if required else ChangeKind.PARAMETER_ADDED
        out.append(Change(kind, name, None, q.default))
    return _renames(out, o_by, n_by)


def _renames(
    changes: list[Change],
    o_by: Mapping[str, tuple[int, Parameter]],
    n_by: Mapping[str, tuple[int, Parameter]],
) -> list[Change]:
    """A parameter removed and one added at the same position with the same kind: a rename."""
    removed = {o_by[c.name][0]: c for c in changes if c.kind == ChangeKind.PARAMETER_REMOVED}
    added = (ChangeKind.PARAMETER_ADDED, ChangeKind.PARAMETER_ADDED_REQUIRED)
    out: list[Change] = []
    used: set[str] = set()
    for c in changes:
        if c.kind in added:
            pos, q = n_by[c.name]
            old = removed.get(pos)
            if old is not None and o_by[old.name][1].kind == q.kind:
                out.append(Change(ChangeKind.PARAMETER_RENAMED, c.name, old.name, c.name))
                used.add(old.name)
                continue
        out.append(c)
    return [c for c in out if not (c.kind == ChangeKind.PARAMETER_REMOVED and c.name in used)]


def public_methods(sym: Symbol) -> dict[str, Symbol]:
    return {
        m.qualname.rsplit(".", 1)[-1]: m
        for m in sym.members
        if m.kind != SymbolKind.CLASS and not m.qualname.rsplit(".", 1)[-1].startswith("_")
    }


def compare_symbols(old: Symbol, new: Symbol, *, members: bool = True) -> list[Change]:
    """Everything that moved between two descriptions of the same symbol."""
    out: list[Change] = []
    if old.kind != new.kind:
        out.append(Change(ChangeKind.KIND_CHANGED, "", old.kind, new.kind))
        return out
    if old.file != new.file:
        out.append(Change(ChangeKind.MOVED, "", f"{old.file}:{old.line}", f"{new.file}:{new.line}"))
    if old.parameters is not None and new.parameters is not None:
        out += compare_parameters(_params(old), _params(new))
    if normalize_annotation(old.returns) != normalize_annotation(new.returns):
        out.append(Change(ChangeKind.RETURNS_CHANGED, "", old.returns, new.returns))
    if old.kind == SymbolKind.CLASS:
        ov = (old.constructor or {}).get("via")
        nv = (new.constructor or {}).get("via")
        if ov != nv and ov and nv:
            out.append(Change(ChangeKind.CONSTRUCTOR_CHANGED, "", ov, nv))
        if members:
            om, nm = public_methods(old), public_methods(new)
            gone, came = sorted(set(om) - set(nm)), sorted(set(nm) - set(om))
            out += [Change(ChangeKind.METHOD_REMOVED, n, None, None) for n in gone]
            out += [Change(ChangeKind.METHOD_ADDED, n, None, None) for n in came]
    return out


class EntryStatus(Word):
    """A symbol's fate between two versions, in the order ``harness diff`` lists them."""

    rank: int
    breaking: bool
    style: str

    REMOVED = ("removed", 0, True, "red")
    MOVED = ("moved", 1, True, "magenta")
    CHANGED = ("changed", 2, False, "yellow")
    ADDED = ("added", 3, False, "green")


@dataclass(frozen=True)
class Entry:
    """One symbol's fate between two versions."""

    symbol: str  # "module:qualname" in the old version (new for added)
    status: EntryStatus
    changes: tuple[Change, ...] = ()
    moved_to: str | None = None
    sites: tuple[dict[str, Any], ...] = ()  # caller uses (with --used-by)

    @property
    def breaking(self) -> bool:
        return self.status.breaking or any(c.breaking for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol,
            "status": self.status.value,
            "moved_to": self.moved_to,
            "breaking": self.breaking,
            "changes": [c.to_dict() for c in self.changes],
            "sites": list(self.sites),
        }


def diff_apis(
    old: Mapping[str, Symbol], new: Mapping[str, Symbol], *, every: bool = False
) -> list[Entry]:
    """Pure: two ``{"module:qualname": Symbol}`` maps -> added/removed/moved/changed entries,
    with the changes ``harness diff`` lists by default (:attr:`ChangeKind.listed`) unless
    ``every``."""

    def kept(changes: list[Change]) -> tuple[Change, ...]:
        return tuple(c for c in changes if every or c.kind.listed)

    entries: list[Entry] = []
    gone = sorted(set(old) - set(new))
    came = sorted(set(new) - set(old))
    by_leaf: dict[str, list[str]] = {}
    for k in came:
        by_leaf.setdefault(k.split(":", 1)[1], []).append(k)
    moved_targets: set[str] = set()
    for k in gone:
        leaf = k.split(":", 1)[1]
        cands = [c for c in by_leaf.get(leaf, []) if old[k].kind == new[c].kind]
        if len(cands) == 1:
            moved_targets.add(cands[0])
            changes = kept(compare_symbols(old[k], new[cands[0]]))
            entries.append(Entry(k, EntryStatus.MOVED, changes, moved_to=cands[0]))
        else:
            entries.append(Entry(k, EntryStatus.REMOVED))
    entries += [Entry(k, EntryStatus.ADDED) for k in came if k not in moved_targets]
    for k in sorted(set(old) & set(new)):
        changes = kept(compare_symbols(old[k], new[k]))
        if changes:
            entries.append(Entry(k, EntryStatus.CHANGED, changes))
    return sorted(entries, key=lambda e: (e.status.rank, e.symbol))
