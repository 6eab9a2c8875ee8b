"""Drift in the kind of object a call returns, where the caller's use depends on the kind.

kindlib-style: ``validate(cfg)`` returned a ``bool`` and returns ``(ok, reason)`` now -- a
non-empty tuple, always true -- so ``if validate(cfg):`` silently passes every config. No
argument selects the change (the ``returns`` module's case); the whole function changed kind.
What each release returns is read from its return statements (every path's shape, ``a > b``
read as a bool, ``(a, b)`` as a tuple of two that is always true), or from the return
annotation where a path is unknown. Said at every use the kind decides -- a truth test
(``if``, ``not``, ``and``/``or``, ``assert``, ``while``), an unpacking, a comparison -- through
a variable bound to the result too, not only at the first call. A warning: the caller runs, it
means something else.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.analysis.apidiff import Change, ChangeKind
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.uses import ResultUse, Site

if TYPE_CHECKING:
    from harness.analysis.facts import ReturnPath
    from harness.analysis.rules.base import Context
    from harness.analysis.scan import Callee

#: kinds whose objects can be false (a display with elements never is: ``_always_true``)
_MAY_BE_FALSE = frozenset({"bool", "None", "int", "float", "str", "tuple", "list", "dict", "set"})
_SCALAR = frozenset({"bool", "None", "int", "float"})
_BOOLISH = (ast.Compare,)
_BOOL_CALLS = frozenset({"isinstance", "issubclass", "hasattr", "callable", "all", "any", "bool"})


@dataclass(frozen=True)
class Returned:
    """What a function's returns are, as far as its source says: the kinds, whether any
    can be false, the arity when every return is a tuple display of one length."""

    kinds: frozenset[str]
    may_be_false: bool
    arity: int | None
    said: str  # the return expressions (or the annotation), for the message
    where: str  # "file line N, M"

    def describe(self) -> str:
        return "/".join(sorted(self.kinds))


def _expr_kind(text: str) -> tuple[str, bool, int | None]:
    """(kind, always true, arity) of one return expression's text; kind "?" when unknown."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return "?", False, None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        elts = node.keys if isinstance(node, ast.Dict) else node.elts
        starred = any(isinstance(e, ast.Starred) for e in elts if e is not None)
        kind = type(node).__name__.lower()
        arity = None if starred or not isinstance(node, ast.Tuple) else len(elts)
        return kind, bool(elts) and not starred, arity
    if isinstance(node, ast.Constant):
        return ("None" if node.value is None else type(node.value).__name__), bool(node.value), None
    if isinstance(node, _BOOLISH) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    ):
        return "bool", False, None
    if isinstance(node, ast.BoolOp) and all(
        _expr_kind(ast.unparse(v))[0] == "bool" for v in node.values
    ):
        return "bool", False, None
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") in _BOOL_CALLS:
        return "bool", False, None
    return "?", False, None


def _annotation(text: str) -> tuple[frozenset[str], bool, int | None] | None:
    """(kinds, may be false, arity) a return annotation says; None when it says no kind."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    members: list[ast.expr] = []

    def split(n: ast.expr) -> None:
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
            split(n.left)
            split(n.right)
        elif isinstance(n, ast.Subscript) and ast.unparse(n.value).split(".")[-1] == "Optional":
            members.extend([n.slice, ast.Constant(None)])
        else:
            members.append(n)

    split(node)
    kinds: set[str] = set()
    falsy, arity = False, None
    for m in members:
        head = ast.unparse(m.value if isinstance(m, ast.Subscript) else m).split(".")[-1]
        kind = {"Tuple": "tuple", "List": "list", "Dict": "dict", "Set": "set"}.get(head, head)
        if isinstance(m, ast.Constant) and m.value is None:
            kind = "None"
        if kind not in _MAY_BE_FALSE:
            return None
        kinds.add(kind)
        elts: list[ast.expr] = []
        if isinstance(m, ast.Subscript) and kind == "tuple":
            elts = m.slice.elts if isinstance(m.slice, ast.Tuple) else [m.slice]
        if elts and not any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
            arity = len(elts) if len(members) == 1 else None  # tuple[a, b]: never empty
        else:
            falsy = True
    return frozenset(kinds), falsy, arity


def returned(sym: Callee) -> Returned | None:
    """What ``sym`` returns: from its return paths when each has a known kind, else from its
    return annotation; None when neither says."""
    paths: tuple[ReturnPath, ...] = sym.return_paths or ()
    read = [_expr_kind(p.expr) for p in paths]
    if read and all(k != "?" for k, _, _ in read):
        arities = {a for _, _, a in read}
        lines = ", ".join(str(n) for n in sorted({p.line for p in paths}))
        return Returned(
            frozenset(k for k, _, _ in read),
            not all(t for _, t, _ in read),
            arities.pop() if len(arities) == 1 else None,
            " or ".join(dict.fromkeys(f"`{p.expr}`" for p in paths)),
            f"{sym.file} line {lines}",
        )
    ann = sym.symbol.returns
    got = _annotation(ann) if ann else None
    if got is None:
        return None
    return Returned(*got, f"`-> {ann}`", f"{sym.file} line {sym.symbol.line}")


def _targets(text: str) -> int | None:
    """How many names an unpacking ``a, b = ...`` binds (None: a starred target, unread)."""
    try:
        st = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return None
    target = st.targets[0] if isinstance(st, ast.Assign) else None
    if not isinstance(target, (ast.Tuple, ast.List)):
        return None
    if any(isinstance(e, ast.Starred) for e in target.elts):
        return None
    return len(target.elts)


def breaks(use: ResultUse, now: Returned, was: Returned) -> str:
    """Pure: what the use does differently with what the call returns now ("" if nothing)."""
    if now.kinds == was.kinds and now.arity == was.arity and now.may_be_false == was.may_be_false:
        return ""
    if use.how == "truth" and was.may_be_false and not now.may_be_false:
        return (
            f"the result tested in `{use.text}` is always true now: a {now.describe()} that is "
            "never empty"
        )
    if use.how == "compare" and was.kinds <= {"bool", "None"} and not now.kinds & was.kinds:
        return f"`{use.text}` compares a {now.describe()} where it compared a {was.describe()}"
    if use.how == "unpack":
        n = _targets(use.text)
        if n is None or was.arity != n:
            return ""
        if now.kinds <= _SCALAR:
            return f"cannot unpack non-iterable {now.describe()} object"
        if now.arity is not None and now.arity != n:
            many = "too many" if now.arity > n else "not enough"
            return f"{many} values to unpack (expected {n}, got {now.arity})"
    return ""


def return_kind_drift(ctx: Context) -> tuple[list[Finding], frozenset[str]]:
    """Findings at each kind-sensitive use of a call whose return changed kind since the
    baseline, and the symbols they cover (``api_drift`` need not say their return again)."""
    if ctx.baseline is None:
        return [], frozenset()
    out: list[Finding] = []
    covered: set[str] = set()
    seen: set[tuple[str, int, str]] = set()
    memo: dict[str, tuple[Returned, Returned, Callee, Callee] | None] = {}
    for site in ctx.scan.calls:
        if not any(u.how in ("truth", "unpack", "compare") for u in site.result):
            continue
        key = site.symbol
        if key not in memo:
            memo[key] = _pair(ctx, key)
        pair = memo[key]
        if pair is None:
            continue
        now, was, new, old = pair
        old_v = f"{old.dist} {old.version or 'baseline'}"
        for use in site.result:
            said = breaks(use, now, was)
            if not said or (site.file, use.line, key) in seen:
                continue
            seen.add((site.file, use.line, key))
            covered.add(key)
            name = new.qualname.rsplit(".", 1)[-1]
            where = Site(site.file, use.line, use.source or use.text, site.scope)
            out.append(
                ctx.finding(
                    Severity.WARNING,
                    Category.DRIFT,
                    where,
                    key,
                    f"{said}: {name}() returns {now.said} in "
                    f"{ctx.version_of(key.split(':')[0])} ({now.where}); {old_v} returned "
                    f"{was.said} ({was.where}), which this use was written for",
                    f"Adapt the use to what {name}() returns now (e.g. unpack the pair and "
                    "test its first item).",
                    new,
                    (
                        Change(
                            ChangeKind.RETURNS_CHANGED,
                            "",
                            was.describe(),
                            now.describe(),
                        ),
                    ),
                )
            )
    return out, frozenset(covered)


def _pair(ctx: Context, key: str) -> tuple[Returned, Returned, Callee, Callee] | None:
    new, old = ctx.callee(key), ctx.base_callee(key)
    if new is None or old is None:
        return None
    now, was = returned(new), returned(old)
    return None if now is None or was is None else (now, was, new, old)
