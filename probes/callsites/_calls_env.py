"""The type environment of the ``callsites`` visitor: what each name in a caller's code refers
to (a callee module, a callee symbol, an instance of a callee class, a member of one).

The use recorder (:mod:`probes.callsites._calls_record`) holds one :class:`TypeEnv` per file
(``bindings`` are the file's imports); this part only infers -- from imports, assignments,
annotations, ``isinstance`` narrowing and the return annotations of callee functions -- and
records nothing. What the callees are it asks :class:`probes.callsites._callees.Callees`.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import walk
from probes.callsites._callees import Callees, Ref
from probes.signatures._syntax import dotted


class TypeEnv:
    """What names refer to in one caller module: ``bindings`` file-wide (its imports), a
    ``local`` dict per scope, a ``cls`` dict per class (``self.x`` types)."""

    def __init__(self, callees: Callees) -> None:
        self.callees = callees
        self.bindings: dict[str, Ref] = {}  # file-wide: imports (any scope)
        #: the file's own module-level functions (a helper returning what it narrowed)
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.module = ""  # the caller module this environment is of
        #: the caller's own classes (``_receivers.OwnClasses``), shared by the scan's files
        self.receivers: Any = None
        #: module-level names: what statements there bind (``fn = lib.func``), then the
        #: module's own defs and classes -- read where no local or import has the name
        self.globals: dict[str, Ref] = {}
        self.own: dict[str, Ref] = {}
        #: the functions being walked, outermost first; the names each binds (when asked)
        self.scopes: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self._binds: dict[int, set[str]] = {}
        #: the file's own module-level classes (a receiver bound to one is not the callee's)
        self.classes: frozenset[str] = frozenset()

    def shadowed(self, name: str) -> bool:
        """Does a function being walked bind ``name`` (a local hiding the module's)?"""
        for fn in self.scopes:
            got = self._binds.get(id(fn))
            if got is None:
                got = {
                    n.id
                    for n in walk(fn)
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                }
                args = fn.args
                got |= {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
                self._binds[id(fn)] = got
            if name in got:
                return True
        return False

    def ref(self, expr: ast.AST, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        if isinstance(expr, ast.Name):
            name = expr.id
            if name in local:  # a local (even of unknown type) hides the module's names
                return self.callees.values.typed(local[name] or self.bindings.get(name))
            got = self.bindings.get(name)
            module_wide = name in self.globals or name in self.own
            if got is None and module_wide and not self.shadowed(name):
                got = self.globals.get(name) or self.own.get(name)
            return self.callees.values.typed(got)
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self" and cls is not None:
                got = cls["attrs"].get(expr.attr)
                if got is not None:
                    return got
            base = self.ref(expr.value, local, cls)
            if base is None:
                return None
            if base[0] == "instance" and not self.callees.is_callee(base[1]):
                own = self.receivers
                return None if own is None else own.member(base, expr.attr)
            if base[0] in ("module", "symbol"):  # a submodule, a member, a value's attribute
                return self.callees.values.attr(base, expr.attr)
            if base[0] == "instance":
                return ("member", base[1], base[2], expr.attr)
            return None
        if isinstance(expr, (ast.Call, ast.Subscript)):
            return self.value_type(expr, local, cls)
        return None

    def narrowed(self, st: ast.stmt, local: dict[str, Ref], cls: dict | None) -> dict | None:
        """``if isinstance(x, Cls):`` (or ``if type(x) is Cls:``): in that body, ``x`` is a
        ``Cls``; ``if type(x) == tuple:`` on a union with one tuple member: that tuple."""
        test = getattr(st, "test", None) if isinstance(st, ast.If) else None
        got = _checked_type(test)
        name, kind = got if got is not None else ("", None)
        r = self.ref(kind, local, cls) if kind is not None else None
        body: dict | None = None
        if (
            r
            and r[0] == "symbol"
            and self.callees.is_callee(r[1])
            and self.callees.is_class(*r[1:3])
        ):
            body = {**local, name: ("instance", r[1], r[2])}
        elif isinstance(st, ast.If):  # ``type(x) == tuple``, a union with one tuple: _sequences
            from probes.callsites._sequences import narrowed_sequence

            body = narrowed_sequence(self, test, local)
            if body is None and name in local:  # another class (the caller's own subclass):
                body = {k: v for k, v in local.items() if k != name}  # x is not known there
        else:
            return None
        return body

    def learn(
        self, st: ast.Assign | ast.AnnAssign, local: dict[str, Ref], cls: dict | None
    ) -> None:
        typ: Ref | None = None
        if isinstance(st, ast.AnnAssign):
            typ = self.annotation_type(st.annotation)
        if typ is None and st.value is not None:
            typ = self.value_type(st.value, local, cls)
        if typ is None and st.value is not None:
            typ = self.own_instance(st.value, local)
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        if typ is None:  # it holds something unknown now (a callee instance is kept: the
            # value is most often the same object, ``m = m.to(device)``)
            for t in targets:
                self._unknown_attr(t, st.value, local, cls)
                for n in walk(t) if isinstance(t, (ast.Name, ast.Tuple, ast.List)) else ():
                    if not isinstance(n, ast.Name) or self._kept(local.get(n.id)):
                        continue
                    if local is self.globals:
                        local.pop(n.id, None)
                    else:
                        local[n.id] = None  # type: ignore[assignment]
            return
        if local is self.globals and typ[0] != "instance" and not self.callees.is_callee(typ[1]):
            typ = None  # module-level aliases of our own defs: not worth each function's walk
        for t in targets:
            if isinstance(t, ast.Name) and typ is None:
                local.pop(t.id, None)
            elif isinstance(t, ast.Name):
                local[t.id] = typ
            elif typ is None:
                continue
            elif (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                and cls is not None
                and not self._own(cls["attrs"].get(t.attr))
                and (typ[0] == "own" or cls["attrs"].get(t.attr, typ) is not None)
            ):  # learnt from every method, in no order: the caller's own class, once, wins;
                # else one made by an unknown call (``_unknown_attr``) does
                cls["attrs"][t.attr] = typ

    def _unknown_attr(
        self, target: ast.expr, value: ast.expr | None, local: dict[str, Ref], cls: dict | None
    ) -> None:
        """``self.x = make(...)`` of an unknown type: ``self.x`` is not the callee class
        another assignment names (peft's ``self.base_model = model`` or ``= cls(model, ...)``
        by branch: a tuner at run time). A constant (``= None``), a name, and a method of the
        attribute or of a callee instance (``self.x = self.x.to(d)``, ``= model.cuda()``: most
        often the same object) leave it as it was."""
        if not (
            cls is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and isinstance(value, ast.Call)
            and not self._own(cls["attrs"].get(target.attr))
        ):
            return
        func = value.func
        if isinstance(func, ast.Attribute) and self._kept(self.ref(func.value, local, cls)):
            return
        reads_itself = any(
            isinstance(n, ast.Attribute)
            and n.attr == target.attr
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
            for n in walk(value)
        )
        if not reads_itself:
            cls["attrs"][target.attr] = None

    def _kept(self, r: Ref | None) -> bool:
        return r is not None and r[0] == "instance" and self.callees.is_callee(r[1])

    def _own(self, r: Ref | None) -> bool:
        """An instance of the caller's own class (``own_instance``'s or ``_receivers``')."""
        return r is not None and (
            r[0] == "own" or (r[0] == "instance" and not self.callees.is_callee(r[1]))
        )

    def learn_methods(self, node: ast.ClassDef, cls: dict) -> None:
        """``self.x`` types from every method of a class, so use order does not matter."""
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = self.method_locals(st, cls)
                for sub in walk(st):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                        self.learn(sub, local, cls)

    def own_instance(self, value: ast.expr, local: dict[str, Ref]) -> Ref | None:
        """``("own", module, Class)`` when ``value`` constructs a class of the caller's own
        (defined in this file, or imported from a module that is not a callee): a receiver
        bound to it is not the callee's object, whatever else it was bound to."""
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Name) and func.id not in local and func.id in self.classes:
            return ("own", "", func.id)
        r = self.ref(func, local, None)
        if not (r and r[0] == "symbol" and len(r) == 3) or self.callees.is_callee(r[1]):
            return None
        mod = self.callees.index.module(r[1])
        node = mod.defs.get(r[2]) if mod is not None else None
        return ("own", "", f"{r[1]}.{r[2]}") if isinstance(node, ast.ClassDef) else None

    def value_type(self, value: ast.expr, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        """What a value is: an instance (of a callee class constructed, of the class a callee
        function's return annotation names -- ``-> Thing``, ``Optional[Thing]`` --, of one of
        the caller's own classes, of what an own function's return annotation names), or a
        name whose type is known (``self.cfg = cfg`` with ``cfg: Config``), or a callee
        function or method itself (``fn = lib.func``, ``getattr(lib, "func", None)``)."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            got = self.ref(value, local, cls)
            return got if got and _carried(got) else None
        if isinstance(value, ast.Subscript):  # an element of a narrowed sequence
            from probes.callsites._sequences import item_of

            return item_of(self.ref(value.value, local, cls), value.slice)
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Call):
            name = literal_getattr(value)
            if name is not None:
                return self._getattr(value, name, local, cls)
            if dotted(value.func) == "super" and cls is not None and self.module:
                return ("instance", self.module, cls["name"], "super")
            r = self.ref(value.func, local, cls)
            if r and r[0] == "member":
                r = ("symbol", r[1], f"{r[2]}.{r[3]}")
            if r and r[0] == "symbol" and self.callees.is_callee(r[1]):
                if self.callees.is_class(r[1], r[2]):
                    return ("instance", r[1], r[2])
                return self.callees.returns_class(r[1], r[2])
            helper = self.functions.get(getattr(value.func, "id", ""))
            if helper is not None:  # our own helper returning what it narrowed
                from probes.callsites._narrowing import helper_class

                made = helper_class(helper)
                if made is not None:
                    return self._narrowed_to(made, local, cls)
            if r and r[0] == "symbol" and self.receivers is not None:
                return self.receivers.returns(r)  # our own class, or our function's annotation
        return None

    def _getattr(
        self, call: ast.Call, name: str, local: dict[str, Ref], cls: dict | None
    ) -> Ref | None:
        """``getattr(x, "name")`` is ``x.name``; with a default, only a name the installed
        callee has stands for its value (else the default does)."""
        r = self.ref(ast.Attribute(value=call.args[0], attr=name, ctx=ast.Load()), local, cls)
        if r is None or len(call.args) < 3 or r[0] == "module":
            return r
        if r[0] == "member" and len(r) == 4:
            key = (r[1], f"{r[2]}.{r[3]}")
        elif r[0] == "symbol" and self.callees.is_callee(r[1]):
            key = (r[1], r[2])
        else:
            return None
        return r if self.callees.lookup.ref(*key).get("found") else None

    def _narrowed_to(self, expr: ast.expr, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        r = self.ref(expr, local, cls)
        if (
            r
            and r[0] == "symbol"
            and self.callees.is_callee(r[1])
            and self.callees.is_class(r[1], r[2])
        ):
            # known only by narrowing past an exit: the object may be a subclass or a mixin's
            # instance (FSDP's FSDPModule), so a member its class lacks is no proof of a break
            return ("instance", r[1], r[2], "narrowed")
        return None

    def narrowed_after(self, st: ast.stmt, local: dict[str, Ref], cls: dict | None) -> None:
        """``assert isinstance(x, C)`` / ``if not isinstance(x, C): raise``: from here on in
        this block, ``x`` is a ``C``."""
        from probes.callsites._narrowing import exit_test

        test = exit_test(st)
        if test is not None and isinstance(test.args[0], ast.Name):
            got = self._narrowed_to(test.args[1], local, cls)
            if got is not None:
                local[test.args[0].id] = got

    def annotation_type(self, ann: ast.expr | None) -> Ref | None:
        if ann is None:
            return None
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(ann, ast.BinOp):  # X | None
            return self.annotation_type(ann.left) or self.annotation_type(ann.right)
        if isinstance(ann, ast.Subscript) and dotted(ann.value).split(".")[-1] == "Optional":
            return self.annotation_type(ann.slice)
        r = self.ref(ann, {}, None)
        if (
            r
            and r[0] == "symbol"
            and self.callees.is_callee(r[1])
            and self.callees.is_class(r[1], r[2])
        ):
            return ("instance", r[1], r[2])
        if r and r[0] == "symbol" and self.receivers is not None:  # one of our own classes
            facts = self.receivers.facts(r[1], r[2])
            return None if facts is None else ("instance", facts.module, facts.qual)
        return None

    def params_types(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Ref]:
        """The parameters' types where annotated; the others are locals of unknown type."""
        local: dict[str, Ref] = {}
        args = fn.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                local[a.arg] = self.annotation_type(a.annotation)  # type: ignore[assignment]
        return local

    def method_locals(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: dict | None) -> dict:
        """A method's parameters, its ``self`` an instance of the caller's class."""
        local = self.params_types(fn)
        if cls is not None and self.module and self.receivers is not None:
            from probes.callsites._class_facts import self_name

            me = self_name(fn)
            if me is not None and local.get(me) is None:
                local[me] = ("instance", self.module, cls["name"], "self")
        return local


def literal_getattr(call: ast.Call) -> str | None:
    """``getattr(x, "name"[, default])``: ``"name"``."""
    if (
        isinstance(call.func, ast.Name)
        and call.func.id == "getattr"
        and len(call.args) in (2, 3)
        and not call.keywords
        and isinstance(call.args[1], ast.Constant)
        and isinstance(call.args[1].value, str)
        and call.args[1].value.isidentifier()
    ):
        return call.args[1].value
    return None


def _carried(r: Ref) -> bool:
    """What an assignment carries to its target: an instance, a callee's member or symbol,
    one of our own defs (a module's value stays where it is read)."""
    return r[0] in ("instance", "member") or (r[0] == "symbol" and len(r) > 2)


def _checked_type(test: ast.expr | None) -> tuple[str, ast.expr] | None:
    """``isinstance(x, C)``, ``type(x) is C`` or ``type(x) == C``: ``(x, C)``."""
    if (
        isinstance(test, ast.Call)
        and dotted(test.func) == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
    ):
        return test.args[0].id, test.args[1]
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.Eq))
        and isinstance(test.left, ast.Call)
        and dotted(test.left.func) == "type"
        and len(test.left.args) == 1
        and not test.left.keywords
        and isinstance(test.left.args[0], ast.Name)
    ):
        return test.left.args[0].id, test.comparators[0]
    return None
