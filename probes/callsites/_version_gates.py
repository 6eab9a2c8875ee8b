"""The version tests an import sits under: which release of a callee (or which Python) runs it.

``if version.parse(transformers.__version__) >= version.parse("5"): from transformers import
New`` imports ``New`` only on transformers 5; on 4.57 that branch never runs, so a name 4.57
lacks there is no error. The probe reads each enclosing ``if`` that tests a callee's version --
``version.parse(m.__version__)``, ``Version(importlib.metadata.version("dist"))``, a module-level
name bound to one, ``is_m_version(">=", "4.50")``, ``is_m_greater_or_equal("2.5")`` -- as a gate
(module, operator, version, branch); the checker decides it with the release being checked. A
``sys.version_info`` test is decided here, for the target's Python (``_platform.Decider``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from probes.signatures._platform import Decider, Version, builtin_aliases

_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_WRAPPERS = frozenset({"parse", "Version", "LooseVersion", "StrictVersion", "parse_version"})
_IS_VERSION = re.compile(r"is_(\w+?)_version$")
_AT_LEAST = re.compile(r"is_(\w+?)_greater_or_equal(?:_than)?$")


def import_gates(tree: ast.Module, python: Version | None) -> dict[int, list[dict[str, Any]]]:
    """id(import node) -> the gates of the ``if`` statements around it, outermost first:
    ``{"module", "op", "version", "taken", "line", "text"}`` (the import runs only where
    ``module``'s version ``op`` ``version`` is ``taken``), or ``{"python": False, ...}`` for a
    Python version test the target's Python decides against the branch."""
    reader = _Reader(tree, python)
    out: dict[int, list[dict[str, Any]]] = {}

    def visit(stmts: list[ast.stmt], gates: list[dict[str, Any]]) -> None:
        for st in stmts:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                if gates:
                    out[id(st)] = gates
                continue
            if isinstance(st, ast.If):
                visit(st.body, gates + reader.gates(st, True))
                visit(st.orelse, gates + reader.gates(st, False))
                continue
            for field in ("body", "orelse", "finalbody"):
                block = getattr(st, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    visit(block, gates)
            for h in getattr(st, "handlers", None) or ():
                visit(h.body, gates)

    visit(tree.body, [])
    return out


def gated_blocks(tree: ast.Module, python: Version | None) -> list[dict[str, Any]]:
    """The line ranges of the ``if`` branches whose test is a version gate, anywhere in the
    module (in functions too): ``{"start", "end", "gates"}`` -- every use in one runs only
    where its gates hold, so a finding there on a release they exclude is no finding."""
    reader = _Reader(tree, python)
    out: list[dict[str, Any]] = []

    def visit(stmts: list[ast.stmt]) -> None:
        for st in stmts:
            if isinstance(st, ast.If):
                for branch, block in ((True, st.body), (False, st.orelse)):
                    gates = reader.gates(st, branch) if block else []
                    if gates:
                        end = max(getattr(b, "end_lineno", b.lineno) or b.lineno for b in block)
                        out.append({"start": block[0].lineno, "end": end, "gates": gates})
            for field in ("body", "orelse", "finalbody"):
                block = getattr(st, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    visit(block)
            for h in getattr(st, "handlers", None) or ():
                visit(h.body)

    visit(tree.body)
    return out


class _Reader:
    """Reads ``if`` tests in one module: its import aliases and module-level version names."""

    def __init__(self, tree: ast.Module, python: Version | None) -> None:
        self.decider = Decider(builtin_aliases(tree.body), python)
        self.modules: dict[str, str] = {}  # local name -> module (``import transformers as tf``)
        self.named: dict[str, ast.expr] = {}  # ``_TV = version.parse(transformers.__version__)``
        self.dist_version = {"version"}  # the names importlib.metadata.version goes by here
        for st in ast.walk(tree):
            if isinstance(st, ast.Import):
                for a in st.names:
                    self.modules[a.asname or a.name.split(".")[0]] = (
                        a.name if a.asname else a.name.split(".")[0]
                    )
            elif isinstance(st, ast.ImportFrom) and (st.module or "").endswith("metadata"):
                self.dist_version |= {a.asname or a.name for a in st.names if a.name == "version"}
            elif isinstance(st, ast.ImportFrom) and st.module and not st.level:
                for a in st.names:  # ``from transformers import __version__ as tv``: tv is it
                    if a.name == "__version__":
                        of = ast.Attribute(ast.Name(st.module.split(".")[0]), "__version__")
                        self.named[a.asname or a.name] = ast.Call(ast.Name("parse"), [of], [])
        for st in tree.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Name):
                    self.named[t.id] = st.value

    def gates(self, st: ast.If, branch: bool) -> list[dict[str, Any]]:
        test, taken = st.test, branch
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, taken = test.operand, not taken
        parts = [test]
        if isinstance(
            test, ast.BoolOp
        ):  # every conjunct holds in an and's body, none in an or's else
            keep = isinstance(test.op, ast.And) == taken
            parts = list(test.values) if keep else []
        out = []
        for part in parts:
            got = self.atom(part)
            if got is not None:
                out.append({**got, "taken": taken, "line": st.lineno, "text": ast.unparse(part)})
            elif self.decider.truth(part) is (not taken) and "version_info" in ast.unparse(part):
                out.append({"python": False, "line": st.lineno, "text": ast.unparse(part)})
        return out

    def atom(self, node: ast.expr) -> dict[str, str] | None:
        """``{"module", "op", "version"}`` of one version comparison, else None."""
        if isinstance(node, ast.Call) and not node.keywords:
            name = _name(node.func)
            m = _IS_VERSION.match(name)
            args = [_text(a) for a in node.args]
            if m and len(args) == 2 and args[0] in _FLIP and args[1]:
                return {"module": m.group(1), "op": args[0], "version": args[1]}
            m = _AT_LEAST.match(name)
            if m and len(args) == 1 and args[0]:
                return {"module": m.group(1), "op": ">=", "version": args[0]}
            return None
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            return None
        op = _OPS.get(type(node.ops[0]))
        left, right = node.left, node.comparators[0]
        if op is None:
            return None
        module, version, asked = self.installed(left), _literal(right), op
        if module is None:
            module, version, op = self.installed(right), _literal(left), _FLIP[op]
        if module is None or version is None:
            return self.as_strings(left, asked, right)
        return {"module": module, "op": op, "version": version}

    def as_strings(self, left: ast.expr, op: str, right: ast.expr) -> dict[str, Any] | None:
        """``m.__version__ < "4.2.0"``: Python compares the two strings, character by
        character (``"4.57.6" < "4.2.0"`` is False), not as versions."""
        for node, other, how in ((left, right, op), (right, left, _FLIP[op])):
            text = _text(other)
            if isinstance(node, ast.Attribute) and node.attr == "__version__" and text:
                head = ast.unparse(node.value)
                module = self.modules.get(head.split(".")[0], head).split(".")[0]
                return {"module": module, "op": how, "version": text, "strings": True}
        return None

    def installed(self, node: ast.expr, depth: int = 0) -> str | None:
        """The module whose installed version ``node`` is, parsed (None: not one)."""
        if depth > 3:
            return None
        if isinstance(node, ast.Name) and node.id in self.named:
            return self.installed(self.named[node.id], depth + 1)
        if isinstance(node, ast.Attribute) and node.attr in ("base_version", "public"):
            return self.installed(node.value, depth + 1)
        if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords):
            return None
        if _name(node.func) not in _WRAPPERS:
            return None
        arg = node.args[0]
        if isinstance(arg, ast.Attribute) and arg.attr == "__version__":
            head = ast.unparse(arg.value)
            return self.modules.get(head.split(".")[0], head).split(".")[0]
        if (
            isinstance(arg, ast.Call)
            and _name(arg.func) in self.dist_version
            and len(arg.args) == 1
        ):
            dist = _text(arg.args[0])
            return dist.replace("-", "_").lower() if dist else None
        return self.installed(arg, depth + 1)


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal(node: ast.expr) -> str | None:
    """``"5"``, ``version.parse("5")``, ``Version("4.50.0")``: the version text."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and _name(node.func) in _WRAPPERS:
        return _text(node.args[0])
    return _text(node)
