"""The keys of a dict the caller builds and spreads with ``f(**opts)``, when the source says them.

``opts = {"a": 1}``, ``dict(a=1)``, ``{**base, "b": 2}``, then ``opts["c"] = 3``,
``opts.update(d=4)``, ``opts.setdefault("e", 5)`` -- each key with the ``if`` conditions it
was added under, relative to the call: a key added in the branch the call is in is always
there, one added in a branch that excludes the call never is. A mapping we cannot read
(``opts.update(other)``, ``{**other, "a": 1}``, ``opts[k] = v``) leaves the dict *open*: the
keys we know are still passed on every path (only ``pop``, ``del`` or a reassignment takes them
away), but any other key may be too. What could drop keys we cannot name (passing ``opts`` to
another call, ``opts.pop(k)``, rebinding it from a call) makes the dict unknowable, and an
unknowable dict says nothing.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import children, walk

UNKNOWN = None
EXCLUSIVE = None  # an event on a branch the call is not on
READS = ("get", "keys", "items", "values", "copy", "__contains__")

# A condition is (id of its ``if``, branch taken, text); a key is {"key", "when", "line"};
# a dict's state is (keys, open) or None (unknowable).
Cond = tuple
State = tuple


def _and(a: str | None, b: str | None) -> str | None:
    return f"{a} and {b}" if a and b else a or b


def _const(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


class DictFacts:
    """Walk a body in order; ``keys_at(name, line)`` answers for a ``**name`` at ``line``."""

    def __init__(self, target: str = "name") -> None:
        self.target = target  # "name": locals; "self": ``self.x`` attributes
        # name -> [(line, conds, op, payload)]; op: set | add | unknown | remove
        self.events: dict[str, list[tuple[int, tuple, str, Any]]] = {}
        self.calls: dict[tuple[str, int], tuple] = {}  # (name, call line) -> the call's conds

    def _name(self, node: ast.AST) -> str | None:
        if self.target == "name" and isinstance(node, ast.Name):
            return node.id
        if (
            self.target == "self"
            and isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            return node.attr
        return None

    def _event(self, name: str, line: int, conds: tuple, op: str, payload: Any = None) -> None:
        self.events.setdefault(name, []).append((line, conds, op, payload))

    # -- what a value holds -----------------------------------------------------------
    def _value(self, value: ast.expr, line: int, conds: tuple) -> State | None:
        """(keys, open) of a dict-valued expression; None when it is not one we can read."""
        if isinstance(value, ast.Dict):
            keys: list[dict] = []
            open_ = False
            for k, v in zip(value.keys, value.values, strict=True):
                if k is None:  # {**base, ...}
                    got = self._spread_of(v, line, conds)
                    keys, open_ = keys + got[0], open_ or got[1]
                elif _const(k) is not None:
                    keys.append({"key": k.value, "when": None, "line": k.lineno})
                else:
                    open_ = True
            return keys, open_
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id != "dict" or len(value.args) > 1:
                return UNKNOWN
            keys, open_ = [], False
            for a in value.args:
                got = self._spread_of(a, line, conds)
                keys, open_ = keys + got[0], open_ or got[1]
            return self._with_keywords(keys, open_, value, line, conds)
        if (  # other.copy()
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "copy"
            and not value.args
        ):
            name = self._name(value.func.value)
            if name is not None and name in self.events:
                return self.state_at(name, line, conds)
        return UNKNOWN

    def _with_keywords(
        self, keys: list[dict], open_: bool, call: ast.Call, line: int, conds: tuple
    ) -> State:
        for k in call.keywords:
            if k.arg is None:
                got = self._spread_of(k.value, line, conds)
                keys, open_ = keys + got[0], open_ or got[1]
            else:
                keys = [*keys, {"key": k.arg, "when": None, "line": call.lineno}]
        return keys, open_

    def _spread_of(self, v: ast.expr, line: int, conds: tuple) -> State:
        """What ``**v`` adds: a dict we track or a literal, else any keys at all (open)."""
        name = self._name(v)
        if name is not None and name in self.events:
            got = self.state_at(name, line, conds)
        else:
            got = self._value(v, line, conds) if isinstance(v, (ast.Dict, ast.Call)) else None
        return got if got is not None else ([], True)

    # -- the walk ---------------------------------------------------------------------
    def walk(self, body: list[ast.stmt], conds: tuple = ()) -> None:
        for st in body:
            self._stmt(st, conds)

    def _stmt(self, st: ast.stmt, conds: tuple) -> None:
        if isinstance(st, ast.If):
            test = ast.unparse(st.test)
            self._uses(st.test, conds)
            self.walk(st.body, (*conds, (id(st), True, test)))
            self.walk(st.orelse, (*conds, (id(st), False, f"not ({test})")))
            return
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        line = st.lineno
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            name = self._name(t)
            if name is not None:
                state = self._value(st.value, line, conds)
                self._uses(st.value, conds)
                self._event(name, line, conds, "unknown" if state is None else "set", state)
                return
            if isinstance(t, ast.Subscript):
                name = self._name(t.value)
                if name is not None:
                    self._uses(st.value, conds)
                    self._uses(t.slice, conds)
                    key = _const(t.slice)
                    keys = [{"key": key, "when": None, "line": line}] if key else []
                    self._event(name, line, conds, "add", (keys, key is None))
                    return
        if isinstance(st, ast.AugAssign) and isinstance(st.op, ast.BitOr):
            name = self._name(st.target)
            if name is not None:  # opts |= other
                self._uses(st.value, conds)
                self._event(name, line, conds, "add", self._spread_of(st.value, line, conds))
                return
        if isinstance(st, ast.Delete):
            for t in st.targets:
                name = self._name(t.value) if isinstance(t, ast.Subscript) else None
                if name is not None and _const(t.slice) is not None:
                    self._event(name, line, conds, "remove", t.slice.value)
                else:
                    self._uses(t, conds)
            return
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            func = st.value.func
            name = self._name(func.value) if isinstance(func, ast.Attribute) else None
            if name is not None and func.attr in ("update", "setdefault"):
                call = st.value
                for a in [*call.args, *(k.value for k in call.keywords)]:
                    self._uses(a, conds)
                if func.attr == "setdefault":
                    key = _const(call.args[0]) if call.args else None
                    keys = [{"key": key, "when": None, "line": line}] if key else []
                    self._event(name, line, conds, "add", (keys, key is None))
                    return
                keys, open_ = [], False
                for a in call.args:
                    got = self._spread_of(a, line, conds)
                    keys, open_ = keys + got[0], open_ or got[1]
                self._event(
                    name, line, conds, "add", self._with_keywords(keys, open_, call, line, conds)
                )
                return
        for child in ("body", "orelse", "finalbody"):
            block = getattr(st, child, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for c in [n for n in children(st) if not isinstance(n, ast.stmt)]:
                    self._uses(c, conds)
                self.walk(block, conds)
        for h in getattr(st, "handlers", []) or []:
            self.walk(h.body, conds)
        if not any(isinstance(getattr(st, f, None), list) for f in ("body", "orelse", "finalbody")):
            self._uses(st, conds)

    def _uses(self, node: ast.AST, conds: tuple) -> None:
        """Reads are fine; ``pop("k")`` drops a key; anything else done to a tracked dict
        makes it unknowable."""
        parent: dict[int, ast.AST] = {}
        for n in walk(node):
            for c in children(n):
                parent[id(c)] = n
        for n in walk(node):
            name = self._name(n)
            if name is None or name not in self.events:
                continue
            if self.target == "name" and not isinstance(getattr(n, "ctx", None), ast.Load):
                continue
            up = parent.get(id(n))
            line = getattr(n, "lineno", 0)
            if isinstance(up, ast.keyword) and up.arg is None:
                call = parent.get(id(up))
                if isinstance(call, ast.Call):  # ``f(**opts)``: the use we answer for
                    self.calls[(name, call.lineno)] = conds
                continue
            if isinstance(up, ast.Attribute) and up.attr in READS:
                continue
            if _copied(n, up):
                continue
            if isinstance(up, ast.Attribute) and up.attr == "pop":
                call = parent.get(id(up))
                key = _const(call.args[0]) if isinstance(call, ast.Call) and call.args else None
                if key is not None:
                    self._event(name, line, conds, "remove", key)
                    continue
            if isinstance(up, ast.Subscript) and isinstance(up.ctx, ast.Load):
                continue
            if isinstance(up, ast.Compare):
                continue  # ``"k" in opts``
            if self.target == "self" and isinstance(up, ast.Attribute):
                continue
            self._event(name, line, conds, "unknown")

    # -- the answer -------------------------------------------------------------------
    def state_at(self, name: str, line: int | None, conds: tuple) -> State | None:
        """(keys, open) of ``name`` just before ``line``, seen from a point under ``conds``."""
        state: State | None = None
        defined = False
        for ln, at, op, payload in self.events.get(name, []):
            if line is not None and ln >= line:
                break
            rel = _relative(at, conds)
            if rel is EXCLUSIVE:
                continue
            when = " and ".join(rel) or None
            if op == "set":
                if not defined or when is None:  # the only value that can reach here
                    state = (list(payload[0]), payload[1])
                elif state is not None:  # this one on its path, the one before on the others
                    sure = {k["key"] for k in payload[0] if k["when"] is None}
                    sure &= {k["key"] for k in state[0] if k["when"] is None}  # both have it
                    new = [
                        {**k, "when": _and(k["when"], when)}
                        for k in payload[0]
                        if k["key"] not in sure
                    ]
                    old = [
                        k if k["key"] in sure else {**k, "when": _and(k["when"], f"not ({when})")}
                        for k in state[0]
                    ]
                    state = (old + new, state[1] or payload[1])
                defined = True
                continue
            defined = True
            if state is None:
                continue
            if op == "unknown":
                state = None
            elif op == "add":
                keys = [{**k, "when": _and(k["when"], when)} for k in payload[0]]
                state = (state[0] + keys, state[1] or payload[1])
            elif op == "remove":
                keep = [k for k in state[0] if k["key"] != payload]
                if when is not None:  # dropped on one path: there on the others
                    keep += [
                        {**k, "when": _and(k["when"], f"not ({when})")}
                        for k in state[0]
                        if k["key"] == payload
                    ]
                state = (keep, state[1])
        return None if state is None else (_merged(state[0]), state[1])

    def keys_at(self, name: str, line: int) -> State | None:
        if name not in self.events:
            return None
        conds = self.calls.get((name, line), ())
        # a method's ``self.opts`` may have been built in any other method: all of them count
        return self.state_at(name, line if self.target == "name" else None, conds)


def _relative(at: tuple, conds: tuple) -> tuple[str, ...] | None:
    """The conditions of an event that the point under ``conds`` is not itself under;
    EXCLUSIVE when the two sit in different branches of one ``if``."""
    p = 0
    while p < len(at) and p < len(conds) and at[p] == conds[p]:
        p += 1
    if p < len(at) and p < len(conds) and at[p][0] == conds[p][0]:
        return EXCLUSIVE
    return tuple(c[2] for c in at[p:])


def _copied(n: ast.AST, up: ast.AST | None) -> bool:
    """``{**d}``, ``dict(d)``, ``other.update(d)``: read into another dict, left as it was."""
    if isinstance(up, ast.Dict):
        return any(v is n for k, v in zip(up.keys, up.values, strict=True) if k is None)
    if isinstance(up, ast.Call) and any(a is n for a in up.args):
        f = up.func
        return (isinstance(f, ast.Name) and f.id == "dict") or (
            isinstance(f, ast.Attribute) and f.attr == "update"
        )
    return False


def _merged(keys: list[dict]) -> list[dict]:
    """One entry per key: always there if any path always adds it, else each condition."""
    out: dict[str, dict] = {}
    for k in keys:
        got = out.get(k["key"])
        if got is None:
            out[k["key"]] = dict(k)
        elif got["when"] is not None:
            whens = [got["when"], k["when"]]
            got["when"] = None if None in whens else " or ".join(dict.fromkeys(whens))
    return list(out.values())


def function_dicts(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> DictFacts:
    facts = DictFacts("name")
    facts.walk(fn.body)
    return facts


def class_dicts(cls: ast.ClassDef) -> DictFacts:
    """``self.opts`` dicts: built in any method (``__init__`` first), mutated in any."""
    facts = DictFacts("self")
    methods = [st for st in cls.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))]
    methods.sort(key=lambda m: m.name != "__init__")
    for m in methods:
        facts.walk(m.body)
    return facts


def spread_keys(visitor: Any, spread: list[ast.expr], line: int, cls: dict | None) -> State | None:
    """(keys, open) of every ``**d`` in a call when each ``d`` is a dict we can read, else None."""
    out: list[dict[str, Any]] = []
    open_ = False
    for value in spread:
        got = None
        fn = visitor._fn
        if isinstance(value, ast.Name) and fn is not None:
            facts = visitor._dict_facts.get(id(fn))
            if facts is None:
                facts = visitor._dict_facts[id(fn)] = function_dicts(fn)
            got = facts.keys_at(value.id, line)
        elif (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == "self"
            and cls is not None
            and cls.get("dicts") is not None
        ):
            got = cls["dicts"].keys_at(value.attr, line)
        if got is None:
            return None
        out += got[0]
        open_ = open_ or got[1]
    return out, open_
