"""What a function returns, path by path: each return expression and the conditions selecting it.

Behaviour drift hides in return statements, not annotations: vLLM 0.16's ``collective_rpc``
returns ``responses[0]`` when ``unique_reply_rank`` is set where 0.11 returned the list. We
walk the body path-sensitively (``if`` forks, ``x if c else y`` forks, a returned call of a
local ``def``/``lambda`` is inlined) and rewrite each condition in terms of the parameters,
following local aliases (``output_rank = unique_reply_rank``). The controller then evaluates
the conditions against a call's literal arguments -- the probe never sees the call.
"""

from __future__ import annotations

import ast
import copy

from probes._walk import walk

MAX_PATHS = 32
MAX_INLINE = 3

Env = dict  # local name -> ast.expr (in terms of parameters) | ast.Lambda | ast.FunctionDef


class _TooMany(Exception):
    pass


def return_paths(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[dict] | None:
    """``[{"expr", "line", "when": [cond, ...], "via": [inlined fn, ...], "shape"}]``; None:
    too many paths to say."""
    params = _param_names(fn.args) - {"self", "cls"}  # the controller cannot decide those
    try:
        walker = _Walker(params)
        walker.block(fn.body, [({}, ())])
    except (_TooMany, RecursionError):
        return None
    out = []
    seen = set()
    for expr, line, conds, via, kind in walker.found:
        when = list(dict.fromkeys(ast.unparse(c) for c in conds if _names(c) & params))
        key = (ast.dump(expr), tuple(when))
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {"expr": ast.unparse(expr), "line": line, "when": when, "via": via, "shape": kind}
        )
    return out


def _param_names(args: ast.arguments) -> set[str]:
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return set(names)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


class _Subst(ast.NodeTransformer):
    """Replace local names by what they were bound to (so conditions speak of parameters)."""

    def __init__(self, env: Env) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        got = self.env.get(node.id)
        if isinstance(got, ast.expr) and not isinstance(got, ast.Lambda):
            return copy.deepcopy(got)
        return node


def _subst(node: ast.expr, env: Env) -> ast.expr:
    """A copy with bound names replaced; the node itself when nothing is bound (no copy)."""
    if not any(isinstance(n, ast.Name) and isinstance(env.get(n.id), ast.expr) for n in walk(node)):
        return node
    return _Subst(env).visit(copy.deepcopy(node))  # type: ignore[no-any-return]


def _join(states: list) -> list:
    """Merge fall-through states with the same conditions; a name bound differently is unknown."""
    groups: dict[str, tuple[Env, tuple]] = {}
    for env, conds in states:
        key = "|".join(ast.dump(c) for c in conds)
        if key not in groups:
            groups[key] = (dict(env), conds)
            continue
        merged = groups[key][0]
        for name in set(merged) | set(env):
            a, b = merged.get(name), env.get(name)
            if a is not b and (
                not isinstance(a, ast.AST)
                or not isinstance(b, ast.AST)
                or ast.dump(a) != ast.dump(b)
            ):
                merged[name] = None
    if len(groups) > MAX_PATHS:
        raise _TooMany
    return list(groups.values())


class _Walker:
    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.found: list[tuple[ast.expr, int, tuple[ast.expr, ...], list[str], str]] = []
        self.depth = 0

    def _fork(self, states: list, test: ast.expr) -> tuple[list, list]:
        """Both branches; a test that no parameter decides adds no condition (paths rejoin)."""
        yes, no = [], []
        for env, conds in states:
            t = _subst(test, env)
            if _names(t) & self.params:
                yes.append((dict(env), (*conds, t)))
                no.append((dict(env), (*conds, ast.UnaryOp(ast.Not(), t))))
            else:
                yes.append((dict(env), conds))
                no.append((dict(env), conds))
        return yes, no

    def block(self, body: list[ast.stmt], states: list) -> list:
        """Run statements over the live states; return the states that fall through."""
        for st in body:
            if not states:
                return []
            states = self.stmt(st, states)
        return states

    def stmt(self, st: ast.stmt, states: list) -> list:
        if isinstance(st, ast.Return):
            for env, conds in states:
                value = st.value if st.value is not None else ast.Constant(None)
                self.ret(value, env, conds, st.lineno, [])
            return []
        if isinstance(st, ast.Raise):
            return []
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for env, _ in states:
                env[st.name] = st
            return states
        if isinstance(st, ast.Assign):
            for env, _ in states:
                for t in st.targets:
                    self._bind(t, st.value, env)
            return states
        if isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            for env, _ in states:
                if isinstance(st.target, ast.Name):
                    if isinstance(st, ast.AnnAssign) and st.value is not None:
                        self._bind(st.target, st.value, env)
                    else:
                        env[st.target.id] = None
            return states
        if isinstance(st, ast.If):
            yes, no = self._fork(states, st.test)
            return _join(self.block(st.body, yes) + self.block(st.orelse, no))
        if isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
            before = [(dict(e), c) for e, c in states]
            after = self.block(st.body, states)
            assigned = {
                n.id
                for s in st.body
                for n in walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            } | _names(getattr(st, "target", ast.Constant(None)))
            for env, _ in before + after:
                for n in assigned & set(env):
                    env[n] = None
            return self.block(st.orelse, before)[: MAX_PATHS // 2] or before
        if isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            after = self.block(st.body, [(dict(e), c) for e, c in states])  # type: ignore[attr-defined]
            for h in st.handlers:  # type: ignore[attr-defined]
                after += self.block(h.body, [(dict(e), c) for e, c in states])
            after = self.block(st.orelse, after)  # type: ignore[attr-defined]
            if st.finalbody:  # type: ignore[attr-defined]
                after = self.block(st.finalbody, after)  # type: ignore[attr-defined]
            if len(after) > MAX_PATHS:
                raise _TooMany
            return after
        if isinstance(st, (ast.With, ast.AsyncWith)):
            return self.block(st.body, states)
        if type(st).__name__ == "Match":
            out = []
            for case in st.cases:  # type: ignore[attr-defined]
                out += self.block(case.body, [(dict(e), c) for e, c in states])
            return out + states
        return states

    def _bind(self, target: ast.expr, value: ast.expr, env: Env) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, ast.Lambda):
                env[target.id] = value
            else:
                env[target.id] = _subst(value, env)
        else:
            for n in walk(target):
                if isinstance(n, ast.Name):
                    env[n.id] = None

    def ret(self, value: ast.expr, env: Env, conds: tuple, line: int, via: list[str]) -> None:
        if len(self.found) > MAX_PATHS:
            raise _TooMany
        if isinstance(value, ast.IfExp):
            t = _subst(value.test, env)
            self.ret(value.body, env, (*conds, t), line, via)
            self.ret(value.orelse, env, (*conds, ast.UnaryOp(ast.Not(), t)), line, via)
            return
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and self.depth < MAX_INLINE
        ):
            local = env.get(value.func.id)
            if isinstance(local, ast.Lambda) and len(value.args) == len(local.args.args):
                # ``aggregate = lambda x: x``: the result is the lambda body over the argument
                names = [a.arg for a in local.args.args]
                if isinstance(local.body, ast.Name) and local.body.id in names:
                    arg = value.args[names.index(local.body.id)]
                    self.ret(arg, env, conds, line, [*via, value.func.id])
                    return
            if isinstance(local, (ast.FunctionDef, ast.AsyncFunctionDef)) and not value.args:
                inner = _Walker(self.params)
                inner.depth = self.depth + 1
                inner.block(local.body, [(dict(env), conds)])
                for expr, ln, cs, vs, kind in inner.found:
                    self.found.append((expr, ln, cs, [*via, local.name, *vs], kind))
                return
        deferred = self._deferred(value, env)
        if deferred is not None and self.depth < MAX_INLINE:
            # ``future = FutureWrapper(..., get_response=get_response); return future.result()``:
            # the value is what the one local function handed to the wrapper returns
            wrapper, local = deferred
            inner = _Walker(self.params)
            inner.depth = self.depth + 1
            inner.block(local.body, [(dict(env), conds)])
            for expr, ln, cs, vs, kind in inner.found:
                self.found.append((expr, ln, cs, [*via, wrapper, local.name, *vs], kind))
            return
        self.found.append((value, line, conds, via, shape(value, env, self.params)))

    def _deferred(
        self, value: ast.expr, env: Env
    ) -> tuple[str, ast.FunctionDef | ast.AsyncFunctionDef] | None:
        """``x.result()`` where ``x = Wrapper(..., f)`` got exactly one local function."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            return None
        base = value.func.value
        if not isinstance(base, ast.Name):
            return None
        bound = env.get(base.id)
        if not isinstance(bound, ast.Call):
            return None
        given = [*bound.args, *(k.value for k in bound.keywords)]
        locals_ = [
            env[g.id]
            for g in given
            if isinstance(g, ast.Name)
            and isinstance(env.get(g.id), (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        if len(locals_) != 1:
            return None
        return f"{_dotted(bound.func)}(...).{value.func.attr}()", locals_[0]


def shape(node: ast.expr, env: Env, params: set[str], depth: int = 0) -> str:
    """What kind of object an expression is, as far as the source says: ``list``,
    ``item(list)`` (an element of one), ``call:KVCacheConfig``, ``param:x``, ``None``; ``?``
    when unknown. Two versions returning the same kind differ in spelling, not behaviour."""
    if depth > 6:
        return "?"
    if isinstance(node, ast.Name):
        bound = env.get(node.id)
        if isinstance(bound, ast.expr) and not isinstance(bound, ast.Lambda):
            return shape(bound, env, params, depth + 1)
        return f"param:{node.id}" if node.id in params and node.id not in env else "?"
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, (ast.Tuple,)):
        return "tuple"
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return "dict"
    if isinstance(node, (ast.Set, ast.SetComp)):
        return "set"
    if isinstance(node, ast.Constant):
        return "None" if node.value is None else type(node.value).__name__
    if isinstance(node, ast.Subscript):
        inner = shape(node.value, env, params, depth + 1)
        if isinstance(node.slice, ast.Slice):
            return inner
        return f"item({inner})" if inner != "?" else "?"
    if isinstance(node, ast.Call):
        head = _dotted(node.func)
        if head in ("list", "tuple", "dict", "set", "sorted"):
            return "list" if head == "sorted" else head
        return f"call:{head}" if head else "?"
    return "?"


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""
