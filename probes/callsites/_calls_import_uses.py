"""The imports of one caller module recorded for the ``callsites`` probe: each import of a
callee with whether it resolves, its names bound in the file's type environment, and for an
import under ``try/except ImportError`` that fails, what the module does without it.

:class:`probes.callsites._calls_record.FileVisitor` makes one per file and hands it each
import the import walk (:mod:`probes.callsites._calls_imports`) finds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from probes.callsites._calls_env import TypeEnv
from probes.callsites._uses import line_scopes
from probes.signatures._resolvable import from_import
from probes.signatures._syntax import resolve_relative


class ImportRecorder:
    """Records one file's imports into ``uses["imports"]``; ``site`` gives a node's place."""

    def __init__(
        self,
        env: TypeEnv,
        uses: dict[str, list[dict[str, Any]]],
        module: str,
        is_pkg: bool,
        tree: ast.Module,
        site: Callable[[ast.AST, str], dict[str, Any]],
    ) -> None:
        self.env = env
        self.callees = env.callees
        self.uses = uses
        self.module = module
        self.is_pkg = is_pkg
        self.tree = tree
        self._scopes: dict[int, str] | None = None  # line -> scope, made once, when needed
        self._gates: dict[int, list[dict[str, Any]]] | None = None  # made on the first miss
        self.site = site

    def record(self, node: ast.Import | ast.ImportFrom, guard: ast.Try | None) -> None:
        guarded = guard is not None
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.env.bindings[a.asname] = ("module", self.callees.module_of(a.name))
                else:
                    self.env.bindings[a.name.split(".")[0]] = ("module", a.name.split(".")[0])
                if self.callees.is_callee(a.name):
                    ok = self.callees.is_module(a.name)
                    self.uses["imports"].append(
                        {
                            **self.site(node, "<module>"),
                            "kind": "import",
                            "module": a.name,
                            "name": None,
                            "guarded": guarded,
                            "ok": ok,
                            "reason": None if ok else f"no module named {a.name!r}",
                            "ref": ("module", a.name),
                            "gates": [] if ok else self.gates(node),
                        }
                    )
            return
        mod = resolve_relative(self.module, self.is_pkg, node.level, node.module)
        for i, a in enumerate(node.names):
            if a.name == "*":
                continue
            local = a.asname or a.name
            real = self.callees.module_of(mod)  # a module made at import reads as its target
            before = self.env.bindings.get(local)
            if self.callees.is_module(f"{mod}.{a.name}"):
                self.env.bindings[local] = ("module", self.callees.module_of(f"{mod}.{a.name}"))
            else:
                self.env.bindings[local] = ("symbol", real, a.name)
            if self.callees.is_callee(mod):
                res = from_import(self.callees.finder, self.callees.lookup, real, a.name)
                if not res.get("ok") and real != mod:
                    res = self.renamed(mod, real, a.name, local) or res
                extra: dict[str, Any] = {}
                narrow: dict[str, Any] = {}
                held = guard
                if held is not None and not res.get("ok") and self.callees.is_module(real):
                    held = self.name_guard(node, held, narrow)
                dead = None if res.get("ok") else self.dead_fallback(node)
                if dead is not None:  # the body's import binds the name: this never runs
                    extra = {"fallback_of": dead}
                    if before is not None:
                        self.env.bindings[local] = before
                elif held is not None and not res.get("ok"):
                    extra = self.without(held, local, node, i)
                self.uses["imports"].append(
                    {
                        **self.site(node, "<module>"),
                        "kind": "from",
                        "module": mod,
                        "name": a.name,
                        "local": local,
                        "guarded": held is not None and not extra.get("reraises"),
                        **res,
                        **extra,
                        **narrow,
                        "ref": self.env.bindings[local],
                        "gates": [] if res.get("ok") else self.gates(node),
                    }
                )

    def gates(self, node: ast.Import | ast.ImportFrom) -> list[dict[str, Any]]:
        """The version tests the import sits under (``_version_gates``): the checker decides
        whether its branch runs on the release checked."""
        if self._gates is None:
            from probes.callsites._version_gates import import_gates

            self._gates = import_gates(self.tree, self.callees.index.python)
        return self._gates.get(id(node), [])

    def renamed(self, mod: str, real: str, name: str, local: str) -> dict[str, Any] | None:
        """``name`` served by an alias module's ``__getattr__`` under another name (transformers
        5's ``XImageProcessorFast`` from an ``..._fast`` alias: ``XImageProcessor``, with a
        warning): the import's result, its first hop that ``__getattr__``; None if not so."""
        got = self.callees.aliases.renamed(mod, name)
        if got is None:
            return None
        new, rule, file = got
        res = from_import(self.callees.finder, self.callees.lookup, real, new)
        if not res.get("ok"):
            return None
        self.env.bindings[local] = ("symbol", real, new)
        hop = {"module": mod, "name": name, "file": file, "line": rule.line, "how": rule.how}
        rest = res.get("chain") or [
            {"module": real, "name": new, "file": "", "line": 1, "how": "defined"}
        ]
        return {"ok": True, "chain": [hop, *rest]}

    def name_guard(
        self, node: ast.ImportFrom, guard: ast.Try, narrow: dict[str, Any]
    ) -> ast.Try | None:
        """The ``try`` that catches this import's missing name (its module is there): plain
        ``ImportError`` or wider. A ``try`` catching only ``ModuleNotFoundError`` lets it by
        -- its line goes into ``narrow["narrow_guard"]`` for the words."""
        from probes.callsites._calls_imports import name_guard

        wider = name_guard(self.tree, node)
        if wider is not guard:
            narrow["narrow_guard"] = guard.lineno
        return wider

    def dead_fallback(self, node: ast.ImportFrom) -> int | None:
        """The line of the ``try`` this import is the ``except ImportError`` fallback of, when
        every statement of that ``try`` body is a callee import that resolves: then nothing
        raises ImportError there and this import never runs (ms-swift 3.12.6: ``from
        vllm.lora.models import LoRAModel``, else ``vllm.lora.lora_model``'s)."""
        from probes.callsites._guards import fallback_try

        t = fallback_try(self.tree, node)
        if t is None or not t.body:
            return None
        for st in t.body:
            if isinstance(st, ast.Import):
                if not all(
                    self.callees.is_callee(a.name) and self.callees.is_module(a.name)
                    for a in st.names
                ):
                    return None
                continue
            if not isinstance(st, ast.ImportFrom):
                return None
            mod = resolve_relative(self.module, self.is_pkg, st.level, st.module)
            if not self.callees.is_callee(mod) or not all(
                a.name != "*" and self.resolves(mod, a.name) for a in st.names
            ):
                return None
        return t.body[0].lineno

    def resolves(self, mod: str, name: str) -> bool:
        if self.callees.is_module(f"{mod}.{name}"):
            return True
        real = self.callees.module_of(mod)
        return bool(from_import(self.callees.finder, self.callees.lookup, real, name).get("ok"))

    def without(
        self, guard: ast.Try, local: str, node: ast.ImportFrom, index: int
    ) -> dict[str, Any]:
        """The module once this guarded import failed: is ``local`` bound, and where is it
        used unguarded (each a NameError when reached)? The same for every name the rest of
        the ``try`` body would have bound (``via``: the line that binds it, never reached)."""
        from probes.callsites._guards import fallback, skipped

        fb = fallback(self.tree, guard, local)
        out: dict[str, Any] = {"fallback": fb["shape"], "reraises": fb["reraises"]}
        if fb["reraises"]:
            return out
        lost: list[tuple[str, int | None]] = [] if fb["bound"] else [(local, None)]
        lost += [(n, ln) for n, ln in skipped(guard, node, index) if n != local]
        out["unbound_uses"] = [u for name, via in lost for u in self.unbound(guard, name, via)]
        return out

    def unbound(self, guard: ast.Try, name: str, via: int | None) -> list[dict[str, Any]]:
        from probes.callsites._guards import fallback, unguarded_uses

        fb = fallback(self.tree, guard, name)
        if via is not None and fb["bound"]:
            return []  # a handler (or an earlier statement) binds it
        flags = fb["flags"]
        if self._scopes is None:  # one walk of the module for all its guarded names
            self._scopes = line_scopes(self.tree)
        scopes = self._scopes
        return [
            {**self.site(n, scopes.get(n.lineno, "<module>")), "name": name, "via": via}
            for n in unguarded_uses(self.tree, guard, name, flags)
        ]
