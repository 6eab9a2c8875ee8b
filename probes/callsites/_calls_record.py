"""Use recording for the ``callsites`` probe: one caller module walked statement by statement,
each import, call, attribute read, subclass and method install of a callee recorded with its
file, line and shape into the scanner's ``uses``.

What a name refers to is the type environment's (:class:`_calls_env.TypeEnv`, one per file);
what the callees are, :class:`_callees.Callees`'s; a module's imports, :mod:`_calls_imports`'s.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from probes._walk import children, walk
from probes.callsites import _attr_guards as guards
from probes.callsites._branches import branches
from probes.callsites._callees import Ref
from probes.callsites._calls_env import TypeEnv, literal_getattr
from probes.callsites._calls_import_uses import ImportRecorder
from probes.callsites._calls_imports import walk_imports
from probes.callsites._keys import FUNCTION_VIEWS, VIEW_ATTRS
from probes.callsites._keys import MARKS as VIEW_MARKS
from probes.callsites._receivers import callee_method
from probes.callsites._replace import replaced
from probes.callsites._uses import attributes_set_on, literal_text, result_uses, self_attributes
from probes.signatures._syntax import dotted


class FileVisitor:
    """Walks one caller module, recording its uses of the callees into ``uses`` (the scan's,
    by kind); ``env`` says what each name refers to, ``env.callees`` what the callees are."""

    def __init__(
        self,
        env: TypeEnv,
        uses: dict[str, list[dict[str, Any]]],
        module: str,
        rel: str,
        is_pkg: bool,
        lines: list[str],
    ) -> None:
        self.env = env
        self.callees = env.callees
        self.uses = uses
        self.module = module
        self.rel = rel
        self.is_pkg = is_pkg
        self.lines = lines
        # id(call) -> what uses its result; filled per function on its first callee call
        self.results: dict[int, list[dict[str, Any]]] = {}
        self._fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self._fn_done: set[int] = set()
        self._dict_facts: dict[int, Any] = {}  # id(function) -> its DictFacts, when needed
        self._guards: list[guards.Guard] = []  # what guards the statement walked (_attr_guards)
        self._held: dict[int, guards.Guard] = {}  # its own expressions' hasattr ... and ...

    def src(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def site(self, node: ast.AST, scope: str) -> dict[str, Any]:
        line = getattr(node, "lineno", 0)
        return {
            "file": self.rel,
            "line": line,
            "col": getattr(node, "col_offset", 0),
            "source": self.src(line),
            "scope": scope,
        }

    def run(self, tree: ast.Module) -> None:
        self.functions = {
            st.name: st
            for st in tree.body
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.env.functions = self.functions  # helpers returning what they narrowed (_narrowing)
        self.env.classes = frozenset(st.name for st in tree.body if isinstance(st, ast.ClassDef))
        self.tree = tree
        text = "\n".join(self.lines)
        self._views = any(m in text for m in VIEW_MARKS)  # a dict view of an object: _keys
        # ``X.attr = one_of_our_functions``: the text test that spares most functions a walk
        names = "|".join(map(re.escape, self.functions))
        self._stores_fn = re.compile(rf"\.\w+\s*=\s*(?:{names})\b(?!\s*\()") if names else None
        imports = ImportRecorder(self.env, self.uses, self.module, self.is_pkg, tree, self.site)
        for node, guard in walk_imports(tree):
            imports.record(node, guard)
        for st in tree.body:  # the module's own defs: calls of them make what they return
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.env.own[st.name] = ("symbol", self.module, st.name)
        self._block(tree.body, "<module>", self.env.globals, None)  # its binds: functions read
        if "version" in text:  # branches a version test decides: _version_gates
            from probes.callsites._version_gates import gated_blocks

            for block in gated_blocks(tree, self.callees.index.python):
                self.uses["gated"].append({"file": self.rel, **block})

    # -- statements -----------------------------------------------------------------------
    def _stmt(self, st: ast.stmt, scope: str, local: dict[str, Ref], cls: dict | None) -> None:
        if isinstance(st, ast.ClassDef):
            self._class(st, scope)
            return
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(st, scope, cls)
            return
        # record uses in this statement's expressions, then learn from assignments
        nodes = _walk_no_defs(st)
        self._held = guards.expr_guarded(nodes)
        view = False  # a dict view of an object (``x.to_dict()``, ``asdict(x)``): _keys
        for node in nodes:
            if isinstance(node, ast.Call):
                self._call(node, scope, local, cls)
                view = view or getattr(node.func, "id", "") in FUNCTION_VIEWS
                name = literal_getattr(node) if len(node.args) == 2 else None
                if name is not None:  # getattr(x, "name") reads x.name
                    read = ast.Attribute(value=node.args[0], attr=name, ctx=ast.Load())
                    self._attr(ast.copy_location(read, node), scope, local, cls)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self._attr(node, scope, local, cls)
                view = view or node.attr in VIEW_ATTRS
        if view and self._views:
            from probes.callsites._keys import record

            self.uses["keys"] += record(self, st, scope, local, cls)
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            self.env.learn(st, local, cls)
        narrowed = self.env.narrowed(st, local, cls)
        for i, child in enumerate(branches(st, local, _child_bodies(st))):
            held = guards.body_guard(st, child)
            self._block(child, scope, narrowed if i == 0 and narrowed else local, cls, held)
        self.env.narrowed_after(st, local, cls)

    def _block(
        self,
        body: list[ast.stmt],
        scope: str,
        local: dict[str, Ref],
        cls: dict | None,
        guard: guards.Guard = frozenset(),
    ) -> None:
        """A block's statements, under what guards it (``hasattr``, ``except AttributeError``)
        and what an early exit in it leaves holding (``if not hasattr(x, "a"): return``)."""
        depth = len(self._guards)
        if guard:
            self._guards.append(guard)
        for sub in body:
            self._stmt(sub, scope, local, cls)
            after = guards.after_guard(sub) if isinstance(sub, ast.If) else None
            if after:
                self._guards.append(after)
        del self._guards[depth:]

    def _class(self, node: ast.ClassDef, scope: str) -> None:
        qual = node.name if scope == "<module>" else f"{scope}.{node.name}"
        cls: dict[str, Any] = {"name": qual, "attrs": {}, "dicts": None}
        if "**self." in "\n".join(self.lines[node.lineno - 1 : node.end_lineno or node.lineno]):
            from probes.callsites._dicts import class_dicts

            cls["dicts"] = class_dicts(node)
        if self.env.receivers is not None:  # what self.name is, asked across the caller
            self.env.receivers.register(self.module, qual, node, cls["attrs"])
        self.env.learn_methods(node, cls)  # self.x types first, so use order does not matter
        heads = [n for e in [*node.bases, *(k.value for k in node.keywords)] for n in walk(e)]
        self._held = guards.expr_guarded(heads)  # ``class M(datasets.Metric)`` reads it
        for n in (n for n in heads if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)):
            self._attr(n, scope, {}, None)
        bases, positions = [], []
        for i, b in enumerate(node.bases):
            r = self.env.ref(b, {}, None)
            if r and r[0] == "symbol" and self.callees.is_callee(r[1]):
                bases.append(r)
                positions.append(i)
        if not bases and node.bases:  # through the caller's own classes
            from probes.callsites._hierarchy import inherited_bases

            bases, positions = inherited_bases(self, node)
        if bases:
            from probes.callsites._hierarchy import subclass_record

            self.uses["subclasses"].append(
                {**self.site(node, scope), **subclass_record(self, node, qual, bases, positions)}
            )
        for st in node.body:
            self._stmt(st, qual, {}, cls)

    def _function(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, cls: dict | None
    ) -> None:
        qual = fn.name if scope == "<module>" else f"{scope}.{fn.name}"
        for d in fn.decorator_list:
            for node in walk(d):
                if isinstance(node, ast.Call):
                    self._call(node, scope, {}, cls)
        method = cls is not None and scope == cls["name"]
        local = self.env.method_locals(fn, cls) if method else self.env.params_types(fn)
        outer, self._fn = self._fn, fn
        self.env.scopes.append(fn)  # a name it binds hides the module's (TypeEnv.shadowed)
        try:
            self._block(fn.body, qual, local, cls)
        finally:
            self._fn = outer
            self.env.scopes.pop()
        text = "\n".join(self.lines[fn.lineno - 1 : fn.end_lineno or fn.lineno])
        if "MethodType" in text or (self._stores_fn and self._stores_fn.search(text)):
            self._installs(fn, qual, local, cls)

    # -- functions installed as methods of callee objects -------------------------------
    def _installs(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, local: dict, cls: dict | None
    ) -> None:
        """``obj.name = types.MethodType(f, obj)`` / ``Cls.name = f`` with ``f`` ours.

        The function then runs with a callee object as ``self``: record every attribute it
        reads there (less those it or this scope sets on the object), and the object's class
        when the source says it (a callee class patched directly, or a known instance).
        """
        for node in walk(fn):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if not isinstance(target, ast.Attribute):
                continue
            value = node.value
            func_name = None
            if isinstance(value, ast.Call) and dotted(value.func).split(".")[-1] == "MethodType":
                if len(value.args) == 2 and isinstance(value.args[0], ast.Name):
                    func_name = value.args[0].id
            elif isinstance(value, ast.Name):
                func_name = value.id
            func = self.functions.get(func_name or "")
            if func is None or not (func.args.posonlyargs or func.args.args):
                continue
            owner = self.env.ref(target.value, local, cls)
            exact = None
            if (
                owner
                and owner[0] in ("symbol", "instance")
                and self.callees.is_callee(owner[1])
                and self.callees.is_class(owner[1], owner[2])
            ):
                exact = ("symbol", owner[1], owner[2])
            if exact is None and isinstance(value, ast.Name):
                continue  # a plain function stored on an instance gets no ``self``
            obj = ast.unparse(target.value)
            set_here = attributes_set_on(fn, obj)
            used = self_attributes(func)
            attrs = sorted(a for a in used if a not in set_here)
            self.uses["installs"].append(
                {
                    **self.site(node, scope),
                    "function": func.name,
                    "function_line": func.lineno,
                    "attrs": attrs,
                    "attr_lines": {a: used[a] for a in attrs},
                    "replaces": target.attr,
                    "object": obj,
                    "target": exact,
                }
            )

    # -- expressions ----------------------------------------------------------------------
    def _call(self, node: ast.Call, scope: str, local: dict[str, Ref], cls: dict | None) -> None:
        if guards.covered(self._guards, self._held, node.func) or guards.calls_caught(self._guards):
            return
        r, node = replaced(self.env, node, local, cls)  # what node.func is; replace(obj, k=v)
        if r is None or r[0] == "module" or not self.callees.is_callee(r[1]):
            return
        shape = {
            "positional": sum(1 for a in node.args if not isinstance(a, ast.Starred)),
            "star": any(isinstance(a, ast.Starred) for a in node.args),
            "keywords": [k.arg for k in node.keywords if k.arg],
            "double_star": any(k.arg is None for k in node.keywords),
        }
        fn = self._fn
        if fn is not None and id(fn) not in self._fn_done:
            self._fn_done.add(id(fn))  # only functions that call a callee pay for this walk
            self.results.update(result_uses(fn))
        result = self.results.get(id(node), [])
        passed_to = None
        for u in result:
            if u["how"] == "passed":
                got = self.env.ref(u["call"].func, local, cls)
                if (
                    got
                    and got[0] == "symbol"
                    and self.callees.is_callee(got[1])
                    and passed_to is None
                ):
                    passed_to = {"symbol": f"{got[1]}:{got[2]}", "keyword": u["keyword"]}
        spread = [k.value for k in node.keywords if k.arg is None]
        if spread:
            from probes.callsites._dicts import spread_keys

            got = spread_keys(self, spread, node.lineno, cls)
            if got is not None:  # an open dict may hold any other key: still a ** for binding
                shape = {**shape, "double_star": got[1], "spread_keys": got[0]}
        extra = {
            "values": {
                "args": [literal_text(a) for a in node.args if not isinstance(a, ast.Starred)],
                "kwargs": {k.arg: literal_text(k.value) for k in node.keywords if k.arg},
            },
            "result": [
                {**u, "source": self.src(u["line"])} for u in result if u["how"] != "passed"
            ],
            "passed_to": passed_to,
        }
        if r[0] == "instance":  # calling the object itself: its class's __call__
            r = ("member", r[1], r[2], "__call__")
        if r[0] == "member" and len(r) > 4 and (r := callee_method(r)) is None:
            return  # a name its own class reaches (_receivers): its attribute says it
        if r[0] == "member":  # a method called on a known instance
            ref = ("symbol", r[1], f"{r[2]}.{r[3]}")
            self.uses["calls"].append(
                {
                    **self.site(node, scope),
                    "ref": ref,
                    "shape": shape,
                    "on_instance": True,
                    "instance_of": f"{r[1]}:{r[2]}",
                    **extra,
                }
            )
            return
        self.uses["calls"].append(
            {
                **self.site(node, scope),
                "ref": r,
                "shape": shape,
                "on_instance": False,
                "instance_of": None,
                **extra,
            }
        )

    def _attr(
        self, node: ast.Attribute, scope: str, local: dict[str, Ref], cls: dict | None
    ) -> None:
        """Attribute reads the caller relies on: on instances, classes, and modules."""
        if guards.covered(self._guards, self._held, node):
            return
        base = self.env.ref(node.value, local, cls)
        if base is not None and base[0] == "instance" and not self.callees.is_callee(base[1]):
            own = self.env.receivers  # our own object: the callee's it reads through, if any
            base = None if own is None else own.target(base, node.attr)
        if base is None or not self.callees.is_callee(base[1]):
            return
        if base[0] == "instance":
            on = base[3] if len(base) > 3 else "instance"
        elif base[0] == "symbol" and self.callees.is_class(base[1], base[2]):
            on = "class"  # e.g. RequestStatus.FINISHED_ABORTED
        elif base[0] == "module" and not self.callees.is_module(f"{base[1]}.{node.attr}"):
            self.uses["attributes"].append(
                {
                    **self.site(node, scope),
                    "attr": node.attr,
                    "on": "module",
                    "ref": ("module", base[1]),
                }
            )
            return
        else:
            return
        self.uses["attributes"].append(
            {
                **self.site(node, scope),
                "attr": node.attr,
                "on": on,
                "ref": ("symbol", base[1], base[2]),
                **({"via": base[4]} if len(base) > 4 else {}),
                **({"closed": True} if base[5:6] == ("closed",) else {}),
                **({"also": [list(a) for a in base[6]]} if len(base) > 6 and base[6] else {}),
            }
        )


def _walk_no_defs(st: ast.stmt) -> list[ast.AST]:
    """Nodes of one statement's own expressions (not nested statements or definitions)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [c for c in children(st) if not isinstance(c, ast.stmt)]
    while todo:
        n = todo.pop()
        out.append(n)
        for c in children(n):
            if not isinstance(c, (ast.stmt, ast.Lambda)):
                todo.append(c)
    out.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return out


def _child_bodies(st: ast.stmt) -> list[list[ast.stmt]]:
    bodies = []
    for field in ("body", "orelse", "finalbody"):
        b = getattr(st, field, None)
        if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
            bodies.append(b)
    for h in getattr(st, "handlers", []) or []:
        bodies.append(h.body)
    for c in getattr(st, "cases", []) or []:
        bodies.append(c.body)
    return bodies
