"""How one symbol's API moved between two versions -- pure, over probe symbol dicts.

Kinds follow griffe's breaking-change vocabulary where one exists, so a reader who knows
griffe reads these at once; we add the ones a caller needs (method added: a new protocol step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.models import VAR_KEYWORD, VAR_POSITIONAL

BREAKING = {
    "parameter-removed",
    "parameter-renamed",
    "symbol-moved",
    "parameter-made-required",
    "parameter-kind-changed",
    "parameter-added-required",
    "parameter-moved",
    "method-removed",
    "symbol-removed",
    "returns-changed",
}


@dataclass(frozen=True)
class Change:
    kind: str
    name: str  # the parameter / method concerned ("" for the symbol itself)
    old: str | None
    new: str | None

    @property
    def breaking(self) -> bool:
        return self.kind in BREAKING

    def describe(self) -> str:
        what = f"'{self.name}'" if self.name else "it"
        texts = {
            "parameter-added": f"new optional parameter {what} (= {self.new})",
            "parameter-added-required": f"new required parameter {what}",
            "parameter-removed": f"parameter {what} removed",
            "parameter-renamed": f"parameter '{self.old}' renamed to '{self.new}'",
            "parameter-made-required": f"parameter {what} lost its default ({self.old})",
            "parameter-default-changed": f"default of {what}: {self.old} -> {self.new}",
            "parameter-kind-changed": f"parameter {what} is now {self.new} (was {self.old})",
            "parameter-moved": f"parameter {what} moved from position {self.old} to {self.new}",
            "parameter-annotation-changed": f"annotation of {what}: {self.old} -> {self.new}",
            "returns-changed": f"return annotation: {self.old} -> {self.new}",
            "method-added": f"new method {what}",
            "method-removed": f"method {what} removed",
            "constructor-changed": f"constructor now made by {self.new} (was {self.old})",
            "moved": f"moved from {self.old} to {self.new}",
            "kind-changed": f"was a {self.old}, now a {self.new}",
            "symbol-removed": "removed",
            "symbol-added": "added",
            "symbol-moved": f"moved from {self.old} to {self.new}",
        }
        return texts.get(self.kind, f"{self.kind} {what}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "old": self.old,
            "new": self.new,
            "breaking": self.breaking,
            "text": self.describe(),
        }


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


def _params(sym: dict[str, Any]) -> list[dict[str, Any]]:
    params = list(sym.get("parameters") or [])
    if sym.get("kind") in ("method", "classmethod", "property") and params:
        params = params[1:]  # self/cls never changes meaning
    return params


def compare_parameters(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[Change]:
    """Parameter-level changes, keyed by name (a rename shows as removed + added)."""
    out: list[Change] = []
    o_by = {p["name"]: (i, p) for i, p in enumerate(old)}
    n_by = {p["name"]: (i, p) for i, p in enumerate(new)}
    variadic = (VAR_POSITIONAL, VAR_KEYWORD)
    for name, (i, p) in o_by.items():
        if name not in n_by:
            out.append(Change("parameter-removed", name, p.get("annotation"), None))
            continue
        j, q = n_by[name]
        if p["kind"] != q["kind"]:
            out.append(Change("parameter-kind-changed", name, p["kind"], q["kind"]))
        elif p["kind"] not in variadic and i != j and "positional" in p["kind"]:
            out.append(Change("parameter-moved", name, str(i), str(j)))
        if p.get("default") is not None and q.get("default") is None and q["kind"] not in variadic:
            out.append(Change("parameter-made-required", name, p.get("default"), None))
        elif p.get("default") is not None and q.get("default") not in (None, p.get("default")):
            out.append(Change("parameter-default-changed", name, p["default"], q["default"]))
        if normalize_annotation(p.get("annotation")) != normalize_annotation(q.get("annotation")):
            out.append(
                Change(
                    "parameter-annotation-changed", name, p.get("annotation"), q.get("annotation")
                )
            )
    for name, (_, q) in n_by.items():
        if name in o_by:
            continue
        required = q.get("default") is None and q["kind"] not in variadic
        out.append(
            Change(
                "parameter-added-required" if required else "parameter-added",
                name,
                None,
                q.get("default"),
            )
        )
    return _renames(out, o_by, n_by)


def _renames(changes: list[Change], o_by: dict[str, Any], n_by: dict[str, Any]) -> list[Change]:
    """A parameter removed and one added at the same position with the same kind: a rename."""
    removed = {o_by[c.name][0]: c for c in changes if c.kind == "parameter-removed"}
    out: list[Change] = []
    used: set[str] = set()
    for c in changes:
        if c.kind in ("parameter-added", "parameter-added-required"):
            pos, q = n_by[c.name]
            old = removed.get(pos)
            if old is not None and o_by[old.name][1]["kind"] == q["kind"]:
                out.append(Change("parameter-renamed", c.name, old.name, c.name))
                used.add(old.name)
                continue
        out.append(c)
    return [c for c in out if not (c.kind == "parameter-removed" and c.name in used)]


def public_methods(sym: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        m["qualname"].rsplit(".", 1)[-1]: m
        for m in sym.get("members") or []
        if m.get("kind") != "class" and not m["qualname"].rsplit(".", 1)[-1].startswith("_")
    }


def compare_symbols(
    old: dict[str, Any], new: dict[str, Any], *, members: bool = True
) -> list[Change]:
    """Everything that moved between two descriptions of the same symbol."""
    out: list[Change] = []
    if old.get("kind") != new.get("kind"):
        out.append(Change("kind-changed", "", old.get("kind"), new.get("kind")))
        return out
    if old.get("file") != new.get("file"):
        out.append(
            Change(
                "moved",
                "",
                f"{old.get('file')}:{old.get('line')}",
                f"{new.get('file')}:{new.get('line')}",
            )
        )
    if old.get("parameters") is not None and new.get("parameters") is not None:
        out += compare_parameters(_params(old), _params(new))
    if normalize_annotation(old.get("returns")) != normalize_annotation(new.get("returns")):
        out.append(Change("returns-changed", "", old.get("returns"), new.get("returns")))
    if old.get("kind") == "class":
        ov = (old.get("constructor") or {}).get("via")
        nv = (new.get("constructor") or {}).get("via")
        if ov != nv and ov and nv:
            out.append(Change("constructor-changed", "", ov, nv))
        if members:
            om, nm = public_methods(old), public_methods(new)
            out += [Change("method-removed", n, None, None) for n in sorted(set(om) - set(nm))]
            out += [Change("method-added", n, None, None) for n in sorted(set(nm) - set(om))]
    return out


#: Changes ``harness diff`` lists; annotation/default respellings are left to ``--all``.
DIFF_KINDS_DEFAULT = frozenset(
    {
        "parameter-added",
        "parameter-added-required",
        "parameter-removed",
        "parameter-renamed",
        "parameter-made-required",
        "parameter-kind-changed",
        "parameter-moved",
        "returns-changed",
        "method-added",
        "method-removed",
        "kind-changed",
        "constructor-changed",
    }
)


@dataclass(frozen=True)
class Entry:
    """One symbol's fate between two versions."""

    symbol: str  # "module:qualname" in the old version (new for added)
    status: str  # added | removed | moved | changed
    changes: tuple[Change, ...] = ()
    moved_to: str | None = None
    sites: tuple[dict[str, Any], ...] = ()  # caller uses (with --used-by)

    @property
    def breaking(self) -> bool:
        return self.status in ("removed", "moved") or any(c.breaking for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "symbol": self.symbol,
            "status": self.status,
            "moved_to": self.moved_to,
            "breaking": self.breaking,
            "changes": [c.to_dict() for c in self.changes],
            "sites": list(self.sites),
        }


def diff_apis(
    old: dict[str, dict[str, Any]],
    new: dict[str, dict[str, Any]],
    kinds: frozenset[str] = DIFF_KINDS_DEFAULT,
) -> list[Entry]:
    """Pure: two ``{"module:qualname": symbol}`` maps -> added/removed/moved/changed entries."""
    entries: list[Entry] = []
    gone = sorted(set(old) - set(new))
    came = sorted(set(new) - set(old))
    by_leaf: dict[str, list[str]] = {}
    for k in came:
        by_leaf.setdefault(k.split(":", 1)[1], []).append(k)
    moved_targets: set[str] = set()
    for k in gone:
        leaf = k.split(":", 1)[1]
        cands = [c for c in by_leaf.get(leaf, []) if old[k].get("kind") == new[c].get("kind")]
        if len(cands) == 1:
            moved_targets.add(cands[0])
            changes = tuple(c for c in compare_symbols(old[k], new[cands[0]]) if c.kind in kinds)
            entries.append(Entry(k, "moved", changes, moved_to=cands[0]))
        else:
            entries.append(Entry(k, "removed"))
    entries += [Entry(k, "added") for k in came if k not in moved_targets]
    for k in sorted(set(old) & set(new)):
        changes = tuple(c for c in compare_symbols(old[k], new[k]) if c.kind in kinds)
        if changes:
            entries.append(Entry(k, "changed", changes))
    order = {"removed": 0, "moved": 1, "changed": 2, "added": 3}
    return sorted(entries, key=lambda e: (order[e.status], e.symbol))
