"""Where the caller's own code says what class a name is, beyond ``if isinstance(x, C):``.

* after ``assert isinstance(x, C)`` or ``if not isinstance(x, C): raise/return/continue``,
  ``x`` is a ``C`` for the rest of the block (:func:`exit_test`);
* a caller helper whose every ``return x`` returns a name narrowed that way (or inside
  ``if isinstance(x, C):``) returns a ``C`` (:func:`helper_class`) -- ``unwrap(model).attr``.
"""

from __future__ import annotations

import ast

from probes._walk import walk

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _isinstance(test: ast.expr | None) -> tuple[str, ast.expr] | None:
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
    ):
        return test.args[0].id, test.args[1]
    return None


def exit_test(st: ast.stmt) -> ast.Call | None:
    """The ``isinstance(x, C)`` that holds once ``st`` is passed, if any."""
    test: ast.expr | None = None
    if isinstance(st, ast.Assert):
        test = st.test
    elif (
        isinstance(st, ast.If)
        and not st.orelse
        and isinstance(st.test, ast.UnaryOp)
        and isinstance(st.test.op, ast.Not)
        and st.body
        and isinstance(st.body[-1], _EXITS)
    ):
        test = st.test.operand
    return test if isinstance(test, ast.Call) and _isinstance(test) else None


def helper_class(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """The class expression every ``return`` of ``fn`` is narrowed to (None: not one)."""
    found: list[str] = []
    ok = _returns(fn.body, {}, found)
    if not ok or not found or len(set(found)) != 1:
        return None
    return ast.parse(found[0], mode="eval").body


def _returns(body: list[ast.stmt], known: dict[str, str], found: list[str]) -> bool:
    """Walk a block: each return must give a name of a known class (``found`` collects)."""
    known = dict(known)
    for st in body:
        if isinstance(st, ast.Return):
            if not (isinstance(st.value, ast.Name) and st.value.id in known):
                return False
            found.append(known[st.value.id])
            continue
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.If):
            got = _isinstance(st.test)
            inner = {**known, got[0]: ast.unparse(got[1])} if got else known
            if not _returns(st.body, inner, found) or not _returns(st.orelse, known, found):
                return False
        else:
            for child in ("body", "orelse", "finalbody"):
                if not _returns(getattr(st, child, None) or [], known, found):
                    return False
            for h in getattr(st, "handlers", None) or []:
                if not _returns(h.body, known, found):
                    return False
        for n in walk(st) if not isinstance(st, ast.If) else ():
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in getattr(n, "targets", [getattr(n, "target", None)]):
                    if isinstance(t, ast.Name):
                        known.pop(t.id, None)  # rebound: no longer what was narrowed
        passed = exit_test(st)
        if passed is not None:
            name, cls = _isinstance(passed) or ("", passed)
            known[name] = ast.unparse(cls)
    return True
