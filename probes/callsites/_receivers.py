"""Receiver-type inference over the caller's own classes: what ``obj.name`` is when ``obj`` is
an instance of a class the caller itself defines (in any of its modules).

The type environment (:class:`probes.callsites._calls_env.TypeEnv`) writes such an object as
``("instance", module, qualname[, how])`` with ``module`` one of the caller's own -- made by
calling the class, by an annotation, by an own function's return annotation, as a method's
``self`` (how: ``"self"``) or as ``super()`` (``"super"``) -- and asks :meth:`OwnClasses.member`
what one of its attributes is. Along the class's chain (its own bases, read across modules):

1. the type the chain stores there (``self.x = Model(...)``, ``self.x = x`` with ``x: Model``,
   ``x: Model`` in the body): a callee instance or another own instance;
2. the chain's method of that name (``("symbol", module, "Cls.meth")``; its return annotation
   types a call; a property's types the read);
3. nothing, where the chain binds the name some other way;
4. else the name is looked up on a callee object (:meth:`OwnClasses.target`): the callee
   classes the chain derives from (how ``"inherited"``: the first, the others ``also``), or
   the callee object the chain's ``__getattr__`` forwards to (``"forwarded"``,
   ``getattr(self.model, name)``).

Only case 4 is recorded as a use of the callee; the checker calls it a break only where the
baseline's class had the name and none of the callee bases has it now (an open class, a name
the caller stores anywhere or an unreadable own base make it say nothing at all).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from probes._walk import walk
from probes.callsites._calls_env import TypeEnv
from probes.callsites._class_facts import (
    OPEN,
    TRIVIAL_BASES,
    body_names,
    forwarder,
    instance_names,
    is_accessor,
    methods,
)
from probes.callsites._tried import tried_binding
from probes.signatures._syntax import dotted

Ref = tuple
_STORED = re.compile(r"\.\s*([A-Za-z_]\w*)\s*(?::[^=\n]+)?=(?!=)")
_SETATTR = re.compile(r"setattr\(\s*[^,()]+,\s*[\"']([A-Za-z_]\w*)[\"']")


class Facts:
    """One own class and its chain (lazily: the walks over method bodies only when asked)."""

    def __init__(self, owner: OwnClasses, module: str, qual: str, node: ast.ClassDef) -> None:
        self.owner, self.module, self.qual, self.node = owner, module, qual, node
        self.bases: list[Facts] = []  # own bases, in MRO order (depth first)
        self.callee_bases: list[Ref] = []  # callee classes the chain derives from
        self.external = False  # a base neither ours nor the callee's: it may hold any name
        own = forwarder(node)
        self.forward: tuple[Facts, str] | None = (self, own) if own and own != OPEN else None
        self._open = own == OPEN
        self._defined: set[str] | None = None
        #: ``self.x`` types the class's own methods store (the visitor's, for its file's)
        self.attrs: dict[str, Ref] | None = None
        self._methods: dict[str, tuple[str, str, Any]] | None = None

    def link(self, depth: int) -> None:
        """Read the bases: own classes (their chains joined), callee classes, others."""
        for b in self.node.bases:
            expr = b.value if isinstance(b, ast.Subscript) else b
            name = dotted(expr)
            full = self.owner.index.resolve_dotted(self.module, name) if name else ""
            if full in TRIVIAL_BASES:
                continue
            owner, _, leaf = full.rpartition(".")
            callees = self.owner.callees
            if name and not (owner and callees.is_callee(owner) and callees.is_class(owner, leaf)):
                tried = tried_binding(self.owner.index, self.module, name)  # try: import X
                owner, _, leaf = (tried or full).rpartition(".")
            if owner and callees.is_callee(owner) and callees.is_class(owner, leaf):
                if ("symbol", owner, leaf) not in self.callee_bases:
                    self.callee_bases.append(("symbol", owner, leaf))
                continue
            got = self.owner.facts(owner, leaf, depth + 1) if owner else None
            if got is None:
                self.external = True
                continue
            self.bases.append(got)
            self.callee_bases += [c for c in got.callee_bases if c not in self.callee_bases]
            self.external |= got.external
            self._open |= got._open
            if self.forward is None:
                self.forward = got.forward

    def is_open(self) -> bool:
        self.defined()
        return self._open

    def defined(self) -> set[str]:
        """Every name the chain binds on the class or stores on its instances."""
        if self._defined is None:
            self._defined = set()  # (a chain that reaches itself stops here)
            names, made = instance_names(self.node)
            self._open |= made
            got = body_names(self.node) | names
            for b in self.bases:
                got |= b.defined()
                self._open |= b._open
            self._defined = got
        return self._defined

    def inherited(self) -> set[str]:
        """What the bases bind: the names ``super()`` finds in the caller's own classes."""
        return set().union(*(b.defined() for b in self.bases)) if self.bases else set()

    def methods(self) -> dict[str, tuple[str, str, Any]]:
        """name -> (module, class qualname, def) over the chain, the nearest first."""
        if self._methods is None:
            got: dict[str, tuple[str, str, Any]] = {}
            for b in reversed(self.bases):
                got.update(b.methods())
            got.update({n: (self.module, self.qual, fn) for n, fn in methods(self.node).items()})
            self._methods = got
        return self._methods

    def type_of(self, attr: str) -> Ref | None:
        """What the chain stores as ``attr``, where the source says it (the nearest class's)."""
        if self.attrs is None:
            self.attrs = {}  # (a chain that reaches itself stops here)
            env = self.owner.env_of(self.module)
            cls: dict[str, Any] = {"name": self.qual, "attrs": self.attrs, "dicts": None}
            for st in self.node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    got = env.annotation_type(st.annotation)
                    if got is not None:
                        self.attrs[st.target.id] = got
            env.learn_methods(self.node, cls)
        got = self.attrs.get(attr)
        for b in self.bases if got is None else ():
            got = b.type_of(attr)
            if got is not None:
                break
        return got


class OwnClasses:
    """The caller's own classes of one scan, read on demand; ``sources``: the caller's texts
    (the names it stores on any object, read once when first needed)."""

    def __init__(
        self,
        callees: Any,
        tops: set[str],
        sources: list[list[str]],
        trees: list[tuple[str, ast.Module]] | None = None,
    ) -> None:
        self.callees = callees
        self.index = callees.index
        self.tops = tops
        self.sources = sources
        self.trees = trees or []  # (module, tree) of the caller's files: its subclasses
        self._subs: dict[str, list[tuple[str, ast.ClassDef, bool]]] = {}
        self._facts: dict[tuple[str, str], Facts | None] = {}
        self._nodes: dict[tuple[str, str], ast.ClassDef] = {}
        self._attrs: dict[tuple[str, str], dict] = {}
        self._envs: dict[str, TypeEnv] = {}
        self._patched: set[str] | None = None

    def is_own(self, module: str) -> bool:
        return bool(module) and module.split(".")[0] in self.tops

    def register(self, module: str, qual: str, node: ast.ClassDef, attrs: dict) -> None:
        """A class the visitor meets (nested ones included, which no import reaches), with
        the ``self.x`` types it learns of it (not learned twice)."""
        self._nodes[(module, qual)] = node
        self._attrs[(module, qual)] = attrs

    def facts(self, module: str, qual: str, depth: int = 0) -> Facts | None:
        key = (module, qual)
        if key in self._facts:
            return self._facts[key]
        self._facts[key] = None
        if not self.is_own(module) or depth > 8:
            return None
        node = self._nodes.get(key)
        if node is None:
            head, _, rest = qual.partition(".")
            got = self.index.resolve(module, head)
            if got is None or not isinstance(got.node, ast.ClassDef):
                return None
            module, node = got.module.name, got.node
            qual = got.name + (f".{rest}" if rest else "")
            for part in rest.split(".") if rest else ():
                node = next(
                    (s for s in node.body if isinstance(s, ast.ClassDef) and s.name == part), None
                )
                if node is None:
                    return None
            if (module, qual) != key and (module, qual) in self._facts:
                self._facts[key] = self._facts[(module, qual)]
                return self._facts[key]
        made = Facts(self, module, qual, node)
        made.attrs = self._attrs.get((module, qual))
        self._facts[key] = self._facts[(module, qual)] = made
        made.link(depth)
        return made

    def env_of(self, module: str) -> TypeEnv:
        """A type environment for one of the caller's modules, its names from its imports."""
        if module in self._envs:
            return self._envs[module]
        env = TypeEnv(self.callees)
        env.module, env.receivers = module, self
        self._envs[module] = env
        mod = self.index.module(module)
        for name, (src, attr, _) in (mod.imports if mod else {}).items():
            if attr is None:
                env.bindings[name] = ("module", self.callees.module_of(src))
            elif self.callees.is_module(f"{src}.{attr}"):
                env.bindings[name] = ("module", self.callees.module_of(f"{src}.{attr}"))
            else:
                env.bindings[name] = ("symbol", self.callees.module_of(src), attr)
        for name, node in (mod.defs if mod else {}).items():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                env.own[name] = ("symbol", module, name)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                env.functions[name] = node
        return env

    def patched(self) -> set[str]:
        """Every name the caller stores on some object anywhere (``x.name = ...``,
        ``setattr(x, "name", ...)``): a name it may put on the callee's objects itself."""
        if self._patched is None:
            got: set[str] = set()
            for lines in self.sources:
                text = "\n".join(lines)
                got.update(_STORED.findall(text))
                got.update(_SETATTR.findall(text))
            self._patched = got
        return self._patched

    # -- what an own instance's attribute is ------------------------------------------------
    def returns(self, ref: Ref) -> Ref | None:
        """What calling the own symbol ``ref`` makes: an instance of an own class called, or
        what an own function's (or method's) return annotation names."""
        module, qual = ref[1], ref[2]
        if not self.is_own(module):
            return None
        owner, _, name = qual.rpartition(".")
        if owner:
            facts = self.facts(module, owner)
            got = facts.methods().get(name) if facts is not None else None
            if got is not None:
                return self.returned(got[0], got[2])
            facts = self.facts(module, qual)
            return None if facts is None else ("instance", facts.module, facts.qual)
        resolved = self.index.resolve(module, qual)
        if resolved is None:
            return None
        if isinstance(resolved.node, ast.ClassDef):
            return ("instance", resolved.module.name, resolved.name)
        if isinstance(resolved.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self.returned(resolved.module.name, resolved.node)
        return None

    def returned(self, module: str, fn: Any) -> Ref | None:
        if getattr(fn, "returns", None) is None:
            return None
        return self.env_of(module).annotation_type(fn.returns)

    def member(self, base: Ref, attr: str) -> Ref | None:
        """What ``base.attr`` refers to, ``base`` an own instance (see the module's list)."""
        facts = self.facts(base[1], base[2])
        if facts is None:
            return None
        chain = facts.bases if len(base) > 3 and base[3] == "super" else [facts]
        for c in chain:
            typ = c.type_of(attr)
            if typ is not None:
                return typ
            got = c.methods().get(attr)
            if got is not None:
                if is_accessor(got[2]):
                    return self.returned(got[0], got[2])
                return ("symbol", got[0], f"{got[1]}.{attr}")
        tgt = self.target(base, attr)
        return None if tgt is None else ("member", tgt[1], tgt[2], attr, *tgt[3:])

    def target(self, base: Ref, attr: str, depth: int = 0) -> Ref | None:
        """The callee object ``base.attr`` is looked up on, as ``("instance", module, Class,
        how, via)``; None where the caller's own classes may hold the name."""
        facts = self.facts(base[1], base[2])
        sup = len(base) > 3 and base[3] == "super"
        if facts is None or (attr.startswith("__") and not (sup and attr == "__init__")):
            return None
        if facts.forward is None and (not facts.callee_bases or facts.external):
            return None  # (before reading the methods: most classes stop here)
        if facts.is_open():
            return None
        if attr in (facts.inherited() if sup else facts.defined()) or attr in self.patched():
            return None
        if facts.forward is not None and not sup:
            if facts.callee_bases:
                return None  # the base's lookup first, then the forward: too many ways
            holder, name = facts.forward
            wrapped = holder.type_of(name)
            if wrapped is None or wrapped[0] != "instance":
                return None
            if self.callees.is_callee(wrapped[1]):
                if len(wrapped) > 3:
                    return None  # known only by narrowing: the object may be more
                via = f"{holder.qual}.__getattr__ (self.{name})"
                return ("instance", wrapped[1], wrapped[2], "forwarded", via)
            return self.target(wrapped[:3], attr, depth + 1) if depth < 4 else None
        if facts.callee_bases and not facts.external:
            b, *more = facts.callee_bases  # several: the name is gone if all of them lack it
            closed = "super" if sup else "closed" if self.closed(facts, attr) else ""
            also = tuple((m[1], m[2]) for m in more)
            return ("instance", b[1], b[2], "inherited", facts.qual, closed, also)
        return None

    def closed(self, facts: Facts, attr: str, depth: int = 0) -> bool:
        """Does no subclass of the class in the caller define ``attr`` (nor may, through a
        base we cannot read)? Then the object has the name only if the callee base has it,
        with no baseline needed to say so."""
        if depth > 6:
            return False
        for module, node, top in self._subclasses(facts):
            sub = self.facts(module, node.name) if top else None
            if sub is None or facts not in sub.bases:
                if sub is None and not top:
                    return False  # a class in a function: not read
                continue  # another class of that name
            if sub.external or sub.is_open() or sub.callee_bases != facts.callee_bases:
                return False
            if attr in sub.defined() or not self.closed(sub, attr, depth + 1):
                return False
        return True

    def _subclasses(self, facts: Facts) -> list[tuple[str, ast.ClassDef, bool]]:
        """The caller's classes whose bases spell the class's name (module, node, at top)."""
        name = facts.qual.rpartition(".")[2]
        if name in self._subs:
            return self._subs[name]
        word = re.compile(rf"\b{re.escape(name)}\b")
        got: list[tuple[str, ast.ClassDef, bool]] = []
        for (module, tree), lines in zip(self.trees, self.sources, strict=False):
            if not any(name in ln for ln in lines):
                continue
            top = {id(st) for st in tree.body}
            for n in walk(tree):
                if (
                    isinstance(n, ast.ClassDef)
                    and n is not facts.node
                    and any(
                        word.search(ast.unparse(b)) or self._names(module, b, name) for b in n.bases
                    )
                ):
                    got.append((module, n, id(n) in top))
        self._subs[name] = got
        return got

    def _names(self, module: str, base: ast.expr, name: str) -> bool:
        """Does ``base`` (``RA`` of ``import RunArguments as RA``) resolve to a ``name``?"""
        expr = base.value if isinstance(base, ast.Subscript) else base
        full = self.index.resolve_dotted(module, dotted(expr)) if dotted(expr) else ""
        return full.rpartition(".")[2] == name


def callee_method(r: Ref) -> Ref | None:
    """``("member", module, Class, name)`` for a call of a name the caller's own class reaches
    (``("member", ..., "inherited", via, closed, also)``) where the callee base's method is the
    one that runs: through ``super()`` (the chain past the class is fixed), or on ``self`` of a
    closed chain (no subclass in the caller defines it), with one callee base. Else None."""
    if r[4] != "inherited" or r[6:7] not in (("super",), ("closed",)) or r[7:8] != ((),):
        return None
    return r[:4]
