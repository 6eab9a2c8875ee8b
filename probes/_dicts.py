"""The keys of a dict the caller builds and spreads with ``f(**opts)``, when the source says them.

``opts = {"a": 1}``, ``dict(a=1)``, ``{**base, "b": 2}``, then ``opts["c"] = 3`` and
``opts.update(d=4)`` -- each key with the ``if`` conditions it was added under. Anything that
could add or drop keys we cannot name (``opts.update(other)``, ``opts[k] = v``, ``del``,
``pop``, passing ``opts`` to another call, rebinding it from a call) makes the dict unknowable,
and an unknowable dict says nothing.
"""

from __future__ import annotations

import ast

UNKNOWN = None


def _literal_keys(value: ast.expr, known: dict[str, list[dict] | None]) -> list[dict] | None:
    if isinstance(value, ast.Dict):
        out: list[dict] = []
        for k, v in zip(value.keys, value.values, strict=True):
            if k is None:  # {**base, ...}
                base = known.get(v.id) if isinstance(v, ast.Name) else None
                if base is None:
                    return UNKNOWN
                out += base
            elif isinstance(k, ast.Constant) and isinstance(k.value, str):
                out.append({"key": k.value, "when": None, "line": k.lineno})
            else:
                return UNKNOWN
        return out
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        if value.args or any(k.arg is None for k in value.keywords):
            return UNKNOWN
        return [{"key": k.arg, "when": None, "line": value.lineno} for k in value.keywords]
    return UNKNOWN


class DictFacts:
    """Walk a body in order; ``keys_at(name, line)`` answers for a ``**name`` at ``line``."""

    def __init__(self, target: str = "name") -> None:
        self.target = target  # "name": locals; "self": ``self.x`` attributes
        self.events: dict[str, list[tuple[int, list[dict] | None, bool]]] = {}

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

    def _event(self, name: str, line: int, keys: list[dict] | None, reset: bool) -> None:
        self.events.setdefault(name, []).append((line, keys, reset))

    def walk(self, body: list[ast.stmt], conds: tuple[str, ...] = ()) -> None:
        for st in body:
            self._stmt(st, conds)

    def _stmt(self, st: ast.stmt, conds: tuple[str, ...]) -> None:
        when = " and ".join(conds) or None
        if isinstance(st, ast.If):
            test = ast.unparse(st.test)
            self._uses(st.test)
            self.walk(st.body, (*conds, test))
            self.walk(st.orelse, (*conds, f"not ({test})"))
            return
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            name = self._name(t)
            if name is not None:
                known = {n: self._current(n) for n in self.events}
                keys = _literal_keys(st.value, known)
                if keys is not None and when:
                    keys = [{**k, "when": when} for k in keys]
                self._event(name, st.lineno, keys, True)
                self._uses(st.value)
                return
            if isinstance(t, ast.Subscript):
                name = self._name(t.value)
                if name is not None:
                    k = t.slice
                    if isinstance(k, ast.Constant) and isinstance(k.value, str):
                        self._event(
                            name,
                            st.lineno,
                            [{"key": k.value, "when": when, "line": st.lineno}],
                            False,
                        )
                    else:
                        self._event(name, st.lineno, UNKNOWN, False)
                    self._uses(st.value)
                    return
        if (
            isinstance(st, ast.Expr)
            and isinstance(st.value, ast.Call)
            and isinstance(st.value.func, ast.Attribute)
            and st.value.func.attr == "update"
        ):
            name = self._name(st.value.func.value)
            if name is not None:
                call = st.value
                keys: list[dict] | None = []
                for a in call.args:
                    got = _literal_keys(a, {})
                    keys = None if got is None or keys is None else keys + got
                if any(k.arg is None for k in call.keywords):
                    keys = None
                if keys is not None:
                    keys += [
                        {"key": k.arg, "when": None, "line": call.lineno} for k in call.keywords
                    ]
                    keys = [{**k, "when": when} for k in keys]
                self._event(name, st.lineno, keys, False)
                return
        for child in ("body", "orelse", "finalbody"):
            block = getattr(st, child, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                for c in [n for n in ast.iter_child_nodes(st) if not isinstance(n, ast.stmt)]:
                    self._uses(c)
                self.walk(block, conds)
        for h in getattr(st, "handlers", []) or []:
            self.walk(h.body, conds)
        if not any(isinstance(getattr(st, f, None), list) for f in ("body", "orelse", "finalbody")):
            self._uses(st)

    def _uses(self, node: ast.AST) -> None:
        """Reads are fine; anything else done to a tracked dict makes it unknowable."""
        parent: dict[int, ast.AST] = {}
        for n in ast.walk(node):
            for c in ast.iter_child_nodes(n):
                parent[id(c)] = n
        for n in ast.walk(node):
            name = self._name(n)
            if name is None or name not in self.events:
                continue
            if self.target == "name" and not isinstance(getattr(n, "ctx", None), ast.Load):
                continue
            up = parent.get(id(n))
            if isinstance(up, ast.keyword) and up.arg is None:
                continue  # ``f(**opts)``: the use we answer for
            if isinstance(up, ast.Attribute) and up.attr in (
                "get",
                "keys",
                "items",
                "values",
                "copy",
            ):
                continue
            if isinstance(up, ast.Subscript) and isinstance(up.ctx, ast.Load):
                continue
            if isinstance(up, ast.Compare):
                continue  # ``"k" in opts``
            if self.target == "self" and isinstance(up, ast.Attribute):
                continue
            self._event(name, getattr(n, "lineno", 0), UNKNOWN, False)

    def _current(self, name: str, line: int | None = None) -> list[dict] | None:
        out: list[dict] | None = None
        for ln, keys, reset in self.events.get(name, []):
            if line is not None and ln >= line:
                break
            if reset:
                out = None if keys is None else list(keys)
            elif keys is None or out is None:
                out = None
            else:
                out += keys
        return out

    def keys_at(self, name: str, line: int) -> list[dict] | None:
        if name not in self.events:
            return None
        # a method's ``self.opts`` may have been built in any other method: all of them count
        return self._current(name, line if self.target == "name" else None)


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
