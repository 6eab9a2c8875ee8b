"""The type environment of the ``callsites`` visitor: what each name in a caller's code refers
to (a callee module, a callee symbol, an instance of a callee class, a member of one).

The use recorder (:mod:`probes.callsites._calls_record`) holds one :class:`TypeEnv` per file
(``bindings`` are the file's imports); this part only infers -- from imports, assignments,
annotations, ``isinstance`` narrowing and the return annotations of callee functions -- and
records nothing. What the callees are it asks :class:`probes.callsites._callees.Callees`.
"""

from __future__ import annotations

import ast

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
        #: the file's own module-level classes (a receiver bound to one is not the callee's)
        self.classes: frozenset[str] = frozenset()

    def ref(self, expr: ast.AST, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        if isinstance(expr, ast.Name):
            return self.callees.values.typed(local.get(expr.id) or self.bindings.get(expr.id))
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self" and cls is not None:
                got = cls["attrs"].get(expr.attr)
                if got is not None:
                    return got
            base = self.ref(expr.value, local, cls)
            if base is None:
                return None
            if base[0] in ("module", "symbol"):  # a submodule, a member, a value's attribute
                return self.callees.values.attr(base, expr.attr)
            if base[0] == "instance":
                return ("member", base[1], base[2], expr.attr)
            return None
        if isinstance(expr, ast.Call):
            return self.value_type(expr, local, cls)
        return None

    def narrowed(self, st: ast.stmt, local: dict[str, Ref], cls: dict | None) -> dict | None:
        """``if isinstance(x, Cls):`` (or ``if type(x) is Cls:``): in that body, ``x`` is a
        ``Cls``."""
        test = getattr(st, "test", None) if isinstance(st, ast.If) else None
        got = _checked_type(test)
        if got is None:
            return None
        name, kind = got
        r = self.ref(kind, local, cls)
        if not (
            r
            and r[0] == "symbol"
            and self.callees.is_callee(r[1])
            and self.callees.is_class(r[1], r[2])
        ):
            return None
        return {**local, name: ("instance", r[1], r[2])}

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
        if typ is None:
            return
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        for t in targets:
            if isinstance(t, ast.Name):
                local[t.id] = typ  # in order: the latest binding is the one used next
            elif (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                and cls is not None
                and cls["attrs"].get(t.attr, ("",))[0] != "own"
            ):  # learnt from every method, in no order: the caller's own class, once, wins
                cls["attrs"][t.attr] = typ

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
        """What a value is an instance of: a callee class constructed, the class a callee
        function's return annotation names (``-> Thing``, ``Optional[Thing]``), or a name
        whose type is known (``self.cfg = cfg`` with ``cfg: Config``)."""
        if isinstance(value, ast.Name):
            got = local.get(value.id)
            return got if got and got[0] == "instance" else None
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Call):
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
                return None if made is None else self._narrowed_to(made, local, cls)
        return None

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
        return None

    def params_types(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Ref]:
        local: dict[str, Ref] = {}
        args = fn.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            t = self.annotation_type(a.annotation)
            if t is not None:
                local[a.arg] = t
        return local


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
