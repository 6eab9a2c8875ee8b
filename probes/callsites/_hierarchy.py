"""What a class hierarchy does when a caller's class joins it, read from source (stdlib only).

Two sides of one question -- "can a caller class that is both a callee subclass and, say, a
pydantic model still be built and used?":

* :func:`other_machinery`, on the caller's class: its bases that bring their own
  construction machinery (a pydantic model, found through the caller's own mixins, or a
  ``metaclass=``), each with its position in the bases (the MRO order) and the members that
  machinery defines with required parameters;
* :func:`construction`, on the callee base: the ``__init_subclass__`` in its MRO that remakes
  every subclass (``dataclass(cls, ...)``, ``cls.__init__ = ...``), the members its class
  decorators add (huggingface_hub's ``@strict`` adds ``validate``), and the calls the base's
  own methods make on ``self`` of the names a machinery defines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from probes._walk import walk
from probes.signatures._class_flavour import FIELD_BASES
from probes.signatures._syntax import dotted

if TYPE_CHECKING:
    from probes.signatures._astindex import Index
    from probes.signatures._syntax import ModuleSummary

# pydantic 2's BaseModel (main.py): its methods that take a required argument. The deprecated
# v1 API is still defined (``validate(cls, value)``, main.py), so a name a base class adds later
# collides with it.
_PYDANTIC: dict[str, list[str]] = {
    "validate": ["value"],
    "parse_obj": ["obj"],
    "parse_raw": ["b"],
    "parse_file": ["path"],
    "from_orm": ["obj"],
    "model_validate": ["obj"],
    "model_validate_json": ["json_data"],
    "model_validate_strings": ["obj"],
}
#: Machinery roots -> member name -> the parameters it requires (after self/cls).
MACHINERY_MEMBERS: dict[str, dict[str, list[str]]] = {
    "pydantic.BaseModel": _PYDANTIC,
    "pydantic.main.BaseModel": _PYDANTIC,
}
#: Class decorators that add members to the class they decorate.
ADDED_BY: dict[str, tuple[str, ...]] = {"huggingface_hub.dataclasses.strict": ("validate",)}
_MAKERS = {"dataclasses.dataclass": "dataclass", "pydantic.dataclasses.dataclass": "dataclass"}
_PLAIN_METACLASSES = {"abc.ABCMeta", "type", "builtins.type"}
_NAMES = frozenset(n for members in MACHINERY_MEMBERS.values() for n in members)


def _class_of(index: Index, module: str, expr: str) -> tuple[ModuleSummary, ast.ClassDef] | None:
    full = index.resolve_dotted(module, expr)
    owner, _, leaf = full.rpartition(".")
    if not owner or index.finder.find(owner.split(".")[0]) is None:
        return None
    got = index.resolve(owner, leaf)
    if got is not None and isinstance(got.node, ast.ClassDef):
        return got.module, got.node
    return None


def _root(index: Index, module: str, expr: str, depth: int = 0) -> tuple[str, str] | None:
    """(root, kind): the machinery ``expr`` (a base) brings, through the caller's own classes."""
    full = index.resolve_dotted(module, expr)
    if full in FIELD_BASES:
        return full, FIELD_BASES[full]
    got = _class_of(index, module, expr) if depth < 8 else None
    if got is None:
        return None
    mod, node = got
    meta = _metaclass(index, mod.name, node)
    if meta is not None:
        return meta, "metaclass"
    for b in node.bases:
        found = _root(index, mod.name, dotted(b), depth + 1)
        if found is not None:
            return found
    return None


def _metaclass(index: Index, module: str, node: ast.ClassDef) -> str | None:
    for k in node.keywords:
        if k.arg == "metaclass":
            full = index.resolve_dotted(module, dotted(k.value))
            return None if full in _PLAIN_METACLASSES else full
    return None


def subclass_record(
    visitor: Any, node: ast.ClassDef, qual: str, bases: list, positions: list[int]
) -> dict[str, Any]:
    """A caller class deriving from callee classes (``visitor``: the file's FileVisitor): its
    methods (override candidates), where the callee bases stand, its other machinery."""
    from probes.signatures._describe import function_kind, parameters

    others = other_machinery(visitor.callees.index, visitor.module, node, set(positions))
    for o in others:
        o["source"] = visitor.src(o["line"])
    methods = [
        {
            "name": st.name,
            "line": st.lineno,
            "kind": function_kind(st, True),
            "parameters": parameters(st.args),
        }
        for st in node.body
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    return {
        "class": qual,
        "bases": bases,
        "methods": methods,
        "positions": positions,
        "others": others,
    }


def other_machinery(
    index: Index, module: str, node: ast.ClassDef, callee_positions: set[int]
) -> list[dict[str, Any]]:
    """The caller class's bases (not the callee ones) that bring construction machinery."""
    out: list[dict[str, Any]] = []
    for i, b in enumerate(node.bases):
        if i in callee_positions:
            continue
        found = _root(index, module, dotted(b))
        if found is not None:
            root, kind = found
            out.append(
                {
                    "position": i,
                    "line": b.lineno,
                    "base": dotted(b),
                    "root": root,
                    "kind": kind,
                    "members": MACHINERY_MEMBERS.get(root, {}),
                }
            )
    meta = _metaclass(index, module, node)
    if meta is not None:
        out.append(
            {
                "position": -1,
                "line": node.lineno,
                "base": meta,
                "root": meta,
                "kind": "metaclass",
                "members": {},
            }
        )
    return out


def construction(index: Index, mod: ModuleSummary, node: ast.ClassDef) -> dict[str, Any]:
    """What the callee class (with its readable bases) does to subclasses and calls on self."""
    out: dict[str, Any] = {"hook": None, "added": {}, "self_calls": {}}
    seen: set[tuple[str, str]] = set()
    todo = [(mod, node, node.name)]
    while todo and len(seen) < 40:
        m, cls, qual = todo.pop(0)
        if (m.name, cls.name) in seen:
            continue
        seen.add((m.name, cls.name))
        file = index.rel(m.loc.file)
        for d in cls.decorator_list:
            full = index.resolve_dotted(m.name, dotted(d.func if isinstance(d, ast.Call) else d))
            for name in ADDED_BY.get(full, ()):
                by = {"by": full, "owner": qual, "file": file, "line": d.lineno}
                out["added"].setdefault(name, by)
        for st in cls.body:
            if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if st.name == "__init_subclass__" and out["hook"] is None:
                out["hook"] = _hook(index, m.name, st, qual, file)
            _self_calls(st, f"{qual}.{st.name}", file, out["self_calls"])
        for b in cls.bases:
            got = _class_of(index, m.name, dotted(b))
            if got is not None:
                todo.append((got[0], got[1], got[1].name))
    return out


def _hook(
    index: Index, module: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, owner: str, file: str
) -> dict[str, Any] | None:
    """``dataclass(cls, ...)`` or ``cls.__init__ = ...`` in an ``__init_subclass__``."""
    for n in walk(fn):
        if (
            isinstance(n, ast.Call)
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == "cls"
        ):
            made = _MAKERS.get(index.resolve_dotted(module, dotted(n.func)))
            if made:
                return {"makes": made, "owner": owner, "file": file, "line": n.lineno}
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr == "__init__"
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "cls"
                ):
                    return {"makes": "__init__", "owner": owner, "file": file, "line": n.lineno}
    return None


def _self_call_sites(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str, file: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each ``self.name(...)`` call in ``fn``: its name and how it binds (what the override
    checks compare with the caller's signature)."""
    for n in walk(fn):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "self"
        ):
            yield (
                n.func.attr,
                {
                    "method": where,
                    "file": file,
                    "line": n.lineno,
                    "positional": len(n.args),
                    "keywords": [k.arg for k in n.keywords if k.arg],
                    "star": any(isinstance(a, ast.Starred) for a in n.args)
                    or any(k.arg is None for k in n.keywords),
                },
            )


def _self_calls(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str, file: str, out: dict[str, Any]
) -> None:
    """The first call of each machinery member name (``_NAMES``) on ``self``."""
    for name, call in _self_call_sites(fn, where, file):
        if name in _NAMES and name not in out:
            out[name] = call


def inherited_bases(
    visitor: Any, node: ast.ClassDef, depth: int = 0
) -> tuple[list[tuple[str, str, str]], list[int]]:
    """A caller class with no callee base of its own: the callee classes its own (caller)
    bases derive from, as refs, each with the position of the base it is reached through."""
    index, is_callee = visitor.callees.index, visitor.callees.is_callee
    refs: list[tuple[str, str, str]] = []
    positions: list[int] = []
    todo = [(visitor.module, b, i, 0) for i, b in enumerate(node.bases)]
    while todo:
        module, b, pos, level = todo.pop(0)
        full = index.resolve_dotted(module, dotted(b))
        owner, _, leaf = full.rpartition(".")
        if owner and is_callee(owner):
            ref = ("symbol", owner, leaf)
            if ref not in refs:
                refs.append(ref)
                positions.append(pos)
            continue
        got = _class_of(index, module, dotted(b)) if level < 6 else None
        if got is not None:
            todo += [(got[0].name, bb, pos, level + 1) for bb in got[1].bases]
    return refs, positions


_CALLS_MEMO: dict[tuple[str, str, int], dict[str, list[dict[str, Any]]]] = {}


def self_calls_of(index: Index, mod: ModuleSummary, node: ast.ClassDef) -> dict[str, list[dict]]:
    """Every ``self.name(...)`` the class's (and its readable bases') methods make, by name
    (the first three of each): how the callee calls a method a caller may override."""
    key = (mod.name, node.name, node.lineno)
    if key in _CALLS_MEMO:
        return _CALLS_MEMO[key]
    out: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    todo = [(mod, node)]
    while todo and len(seen) < 40:
        m, cls = todo.pop(0)
        if (m.name, cls.name) in seen:
            continue
        seen.add((m.name, cls.name))
        file = index.rel(m.loc.file)
        for st in cls.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _all_self_calls(st, f"{cls.name}.{st.name}", file, out)
        for b in cls.bases:
            got = _class_of(index, m.name, dotted(b))
            if got is not None:
                todo.append(got)
    _CALLS_MEMO[key] = out
    return out


def _all_self_calls(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str, file: str, out: dict[str, list]
) -> None:
    """Up to three calls of every name on ``self``."""
    for name, call in _self_call_sites(fn, where, file):
        calls = out.setdefault(name, [])
        if len(calls) < 3:
            calls.append(call)
