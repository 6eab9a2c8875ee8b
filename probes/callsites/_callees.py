"""What the ``callsites`` visitor asks about the callees while it walks a caller: is a module
one of them, is a name a module or a class, what class a function returns, what a named value
is an instance of. One per scan, shared by the type environment and the use recorder; it holds
the answers' caches and knows nothing of the walk.
"""

from __future__ import annotations

import ast

from probes._finder import ProbeFailure
from probes.callsites._uses import annotation_union
from probes.callsites._values import Values
from probes.signatures._astindex import Index
from probes.signatures._lookup import Lookup
from probes.signatures._module_alias import Aliases
from probes.signatures._resolvable import compiled
from probes.signatures._syntax import dotted

# A reference is a tuple: ("module", name) | ("symbol", module, qualname) | ("instance", module,
# qualname) -- the last one is "an instance of that class".
Ref = tuple


class Callees:
    """The callee dists of one scan (by their top-level import names), asked by reference."""

    def __init__(self, index: Index, lookup: Lookup, tops: set[str]) -> None:
        self.index = index
        self.finder = index.finder
        self.lookup = lookup
        self.tops = tops
        self._is_class: dict[tuple[str, str], bool] = {}
        self._returns: dict[tuple[str, str], Ref | None] = {}
        self.values = Values(self)  # a callee's named values: instances of its classes
        self.aliases = Aliases(index)  # modules a package's __init__ makes by a function

    def is_callee(self, module: str) -> bool:
        return module.split(".")[0] in self.tops

    def is_module(self, name: str) -> bool:
        return (
            self.finder.find(name) is not None
            or bool(compiled(self.finder, name))
            or (self.alias_of(name) is not None)
        )

    def alias_of(self, name: str) -> str | None:
        """The module ``name`` forwards to, where no file is it but an ancestor package's
        ``__init__`` makes it at import (transformers 5's ``tokenization_utils``)."""
        if self.finder.find(name) is not None or compiled(self.finder, name):
            return None
        target = self.aliases.target(name)
        return target if target is not None and self.finder.find(target) is not None else None

    def module_of(self, name: str) -> str:
        """``name``, or the module it is an alias of: where its members are read."""
        return self.alias_of(name) or name

    def returns_class(self, module: str, qualname: str) -> Ref | None:
        """The callee class a function's return annotation names, if exactly one."""
        key = (module, qualname)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None
        mod = self.index.module(module)
        if mod is None:
            return None
        try:  # the definition's node is enough: no need to describe the whole symbol
            fn, owner_mod, _ = self.lookup._resolve_qualname(mod, qualname)
        except ProbeFailure:
            return None
        ann = getattr(fn, "returns", None)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ann is None:
            return None
        names = [
            n
            for n in annotation_union(ann)
            if not (isinstance(n, ast.Constant) and n.value is None)
        ]
        if len(names) != 1 or dotted(names[0]).split(".")[-1] in ("Self", "Any"):
            return None
        full = self.index.resolve_dotted(owner_mod.name, dotted(names[0]))
        owner, _, leaf = full.rpartition(".")
        got = None
        if owner and self.is_callee(owner) and self.is_class(owner, leaf):
            got = ("instance", owner, leaf)
        self._returns[key] = got
        return got

    def is_class(self, module: str, qualname: str) -> bool:
        key = (module, qualname)
        if key not in self._is_class:
            got = self.lookup.ref(module, qualname)
            sym = got.get("symbol") or {}
            self._is_class[key] = sym.get("kind") == "class"
        return self._is_class[key]
