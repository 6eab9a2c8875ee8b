"""Parse modules with ``ast`` and resolve names across them, following re-exports.

A name in a module can be: defined there (def, class, assignment), imported from elsewhere
(``from x import y as z``, also under ``if TYPE_CHECKING``), a submodule, or a lazy export that a
module ``__getattr__`` serves from a ``{"Name": ".mod:attr"}`` table (vLLM's pattern). We follow
each hop and record it, so ``vllm.config:SchedulerConfig`` shows its way to
``vllm/config/scheduler.py``.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from probes._finder import Finder, ModuleLocation, ProbeFailure
from probes._walk import walk
from probes.signatures._bound import made_class as bound_made_class
from probes.signatures._lazy_exports import Shims, lazy_table, read_getattr
from probes.signatures._lazy_package import (
    getattr_rules,
    import_structure_modules,
    structure_exports,
    sys_modules_class,
)
from probes.signatures._platform import Decider, Version, builtin_aliases, target_python
from probes.signatures._star import star_hides
from probes.signatures._suffix_fallback import SuffixRule
from probes.signatures._syntax import ModuleSummary, Source, dotted, resolve_relative


@dataclass(frozen=True)
class Hop:
    module: str
    name: str
    file: str
    line: int
    how: str  # "defined" | "import" | "lazy" | "deprecated" | "submodule" | "star-import"

    def to_dict(self) -> dict:
        return {
            "module": self.module,
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "how": self.how,
        }


@dataclass
class Resolved:
    """Where a name ends up: a node in a module, or a whole module."""

    module: ModuleSummary
    name: str
    node: ast.AST | None  # None means the name is the module itself
    chain: list[Hop]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _top_level_statements(
    body: list[ast.stmt], decider: Decider | None = None, python: Version | None = None
) -> list[ast.stmt]:
    """Module statements, descending into if/try blocks (TYPE_CHECKING, ImportError guards).

    An ``if`` on the platform or the Python version (``sys.platform``, ``os.name``,
    ``sys.builtin_module_names``, ``sys.version_info``) is decided as the probed interpreter
    decides it, so only the branch that runs there is read; other tests keep both branches.
    """
    if decider is None:
        decider = Decider(builtin_aliases(body), python)
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.If):
            taken = decider.truth(st.test)
            if taken is not False:
                out.extend(_top_level_statements(st.body, decider))
            if taken is not True:
                out.extend(_top_level_statements(st.orelse, decider))
        elif isinstance(st, ast.Try):
            out.extend(_top_level_statements(st.body, decider))
            for h in st.handlers:
                out.extend(_top_level_statements(h.body, decider))
            out.extend(_top_level_statements(st.orelse, decider))
            out.extend(_top_level_statements(st.finalbody, decider))
        else:
            out.append(st)
    return out


def summarize(
    name: str,
    loc: ModuleLocation,
    source: str,
    python: Version | None = None,
    tree: ast.Module | None = None,
) -> ModuleSummary:
    """Pure: module text -> what it defines, imports and lazily exports, as read by Python
    ``python`` (default: this one); ``tree``: the text already parsed."""
    tree = ast.parse(source, filename=loc.file) if tree is None else tree
    lines = source.split("\n")
    s = ModuleSummary(name, loc, tree, lines, src=Source(lines))
    tables: dict[str, tuple[ast.Dict, int]] = {}  # read as lazy tables if __getattr__ serves
    for st in _top_level_statements(tree.body, None, python):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if st.name == "__getattr__":
                s.has_getattr = True
            prev = s.defs.get(st.name)
            if not (
                isinstance(prev, (ast.FunctionDef, ast.AsyncFunctionDef))
                and _is_impl(prev)
                and not _is_impl(st)
            ):
                s.defs[st.name] = st
        elif isinstance(st, ast.Import):
            for a in st.names:
                if a.asname:
                    s.imports[a.asname] = (a.name, None, st.lineno)
                else:
                    top = a.name.split(".")[0]
                    s.imports.setdefault(top, (top, None, st.lineno))
        elif isinstance(st, ast.ImportFrom):
            mod = resolve_relative(name, loc.is_package, st.level, st.module)
            for a in st.names:
                if a.name == "*":
                    s.star_imports.append(mod)
                else:
                    s.imports[a.asname or a.name] = (mod, a.name, st.lineno)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    made = made_class(st, t.id) if isinstance(st.value, ast.Call) else None
                    s.defs.setdefault(t.id, made or st)  # namedtuple(...) & co: a class
                    if t.id == "__all__" and st.value is not None:
                        s.all_names = _str_list(st.value)
                    elif isinstance(st.value, ast.Dict):
                        tables[t.id] = (st.value, st.lineno)
                s.has_getattr |= "__getattr__" in {getattr(n, "id", "") for n in walk(t)}
        elif (
            isinstance(st, ast.AugAssign)
            and isinstance(st.target, ast.Name)
            and st.target.id == "__all__"
            and s.all_names is not None
        ):
            s.all_names.extend(_str_list(st.value) or [])
    if loc.is_package and "define_import_structure" in source:
        for sibling in import_structure_modules(tree, loc.file):
            if f"{name}.{sibling}" not in s.star_imports:
                s.star_imports.append(f"{name}.{sibling}")
        s.runtime_class = sys_modules_class(tree)
    if s.has_getattr:
        read = {k: lazy_table(v, name, loc.is_package, line) for k, (v, line) in tables.items()}
        s.shims = read_getattr(s, {k: t for k, t in read.items() if t})
        s.lazy.update(s.shims.served)
        for table in read.values():
            s.lazy.update(table)
    if loc.is_package and "sys.modules[" in source:  # transformers 4's _import_structure
        served, unsure, stars = structure_exports(tree, name)
        for k, v in served.items():
            if v[0]:
                s.lazy.setdefault(k, v)
            else:  # a setattr puts it there: it may exist, from nowhere we can read
                s.shims = s.shims or Shims({}, {}, set(), readable=True)
                s.shims.unsure.add(k)
                s.has_getattr = True
        s.star_imports.extend(m for m in stars if m not in s.star_imports)
        s.has_getattr |= unsure  # with no shims read: any other name may be served
    return s


def made_class(st: ast.stmt, name: str) -> ast.ClassDef | None:
    return bound_made_class(st, name) if isinstance(st, ast.Assign) else None


def _alias_of(node: ast.AST | None) -> str | None:
    """``New = Old`` at module level: the name it aliases."""
    value = getattr(node, "value", None)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(value, ast.Name):
        return value.id
    return None


def _is_impl(node: ast.AST) -> bool:
    """False for ``@overload`` stubs, so the implementation wins in ``defs``."""
    decos = getattr(node, "decorator_list", [])
    return not any(dotted(d).split(".")[-1] == "overload" for d in decos)


def _str_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        vals = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        return [v for v in vals if isinstance(v, str)]
    return None


class Index:
    """Lazily parsed modules over one Finder; each file is read and parsed at most once."""

    MAX_HOPS = 32

    def __init__(self, finder: Finder, python: Version | None = None) -> None:
        self.finder = finder
        #: the Python the modules are read for (``_platform.target_python``): its version
        #: decides ``sys.version_info`` tests and an enum's call signature
        self.python: Version = python or target_python({})
        self._mods: dict[str, ModuleSummary | None] = {}
        #: files parsed already (the callsites probe's caller files), by path: not again
        self.parsed: dict[str, tuple[str, ast.Module]] = {}
        #: (package, its run-time class) -> that class's ``__getattr__`` suffix rules, file
        self._runtime_rules: dict[tuple[str, str], tuple[list[SuffixRule], str]] = {}

    def module(self, name: str) -> ModuleSummary | None:
        if name in self._mods:
            return self._mods[name]
        loc = self.finder.find(name)
        summary = None
        if loc is not None:
            if not loc.file:  # namespace package: nothing to parse
                summary = summarize(name, loc, "", self.python)
            else:
                source, tree = self.parsed.pop(loc.file, (None, None))
                try:
                    if source is None:
                        source = read_source(loc.file)
                    summary = summarize(name, loc, source, self.python, tree)
                except SyntaxError as exc:
                    raise ProbeFailure(
                        "invalid-source",
                        f"{loc.file}:{exc.lineno}: {exc.msg} (this Python cannot parse it)",
                        {"file": loc.file, "line": exc.lineno},
                    ) from None
        self._mods[name] = summary
        return summary

    def rel(self, path: str) -> str:
        root = self.finder._root_of(path)
        return os.path.relpath(path, root) if root else path

    def resolve(self, module: str, name: str) -> Resolved | None:
        """Follow ``module.name`` to its definition; None if it does not resolve statically."""
        chain: list[Hop] = []
        seen: set[tuple[str, str]] = set()
        mod = self.module(module)
        while mod is not None and len(chain) < self.MAX_HOPS:
            key = (mod.name, name)
            if key in seen:
                return None
            seen.add(key)
            file = self.rel(mod.loc.file) if mod.loc.file else mod.name
            node = mod.defs.get(name)
            is_assign = isinstance(node, (ast.Assign, ast.AnnAssign))
            alias = _alias_of(node) if is_assign and name not in mod.imports else None
            if alias is not None and alias != name and (alias in mod.defs or alias in mod.imports):
                # ``PretrainedConfig = PreTrainedConfig``: the old name is the class itself
                chain.append(Hop(mod.name, name, file, getattr(node, "lineno", 1), "alias"))
                name = alias
                continue
            if node is not None and (not is_assign or name not in mod.imports):
                chain.append(Hop(mod.name, name, file, getattr(node, "lineno", 1), "defined"))
                return Resolved(mod, name, node, chain)
            if name in mod.imports:
                src, attr, line = mod.imports[name]
                if attr is None:  # ``import a.b as name``: the name is a module
                    chain.append(Hop(mod.name, name, file, line, "import"))
                    target = self.module(src)
                    if target is None:
                        return None
                    chain.append(Hop(src, "", self.rel(target.loc.file), 1, "module"))
                    return Resolved(target, "", None, chain)
                chain.append(Hop(mod.name, name, file, line, "import"))
                nxt = self.module(src)
                if nxt is None or (
                    attr not in nxt.defs
                    and attr not in nxt.imports
                    and attr not in nxt.lazy
                    and not nxt.star_imports
                ):
                    sub = self.module(f"{src}.{attr}")
                    if sub is not None:
                        chain.append(Hop(sub.name, "", self.rel(sub.loc.file), 1, "module"))
                        return Resolved(sub, "", None, chain)
                    if nxt is None:
                        return None
                mod, name = nxt, attr
                continue
            sub = self.module(f"{mod.name}.{name}") if mod.loc.is_package else None
            if sub is not None:
                chain.append(Hop(sub.name, "", self.rel(sub.loc.file), 1, "module"))
                return Resolved(sub, "", None, chain)
            if name in mod.lazy:  # "deprecated": its __getattr__ branch warns, on that line
                src, attr, line = mod.lazy[name]
                warns = mod.shims.deprecated.get(name, 0) if mod.shims else 0
                how = "deprecated" if warns else "lazy"
                chain.append(Hop(mod.name, name, file, warns or line, how))
                mod, name = self.module(src), attr  # type: ignore[assignment]
                continue
            for star in mod.star_imports:
                got = None if star_hides(self.module(star), name) else self.resolve(star, name)
                if got is not None:
                    chain.append(Hop(mod.name, name, file, 1, "star-import"))
                    return Resolved(got.module, got.name, got.node, chain + got.chain[:])
            served = self._served_as(mod, name)
            if served is None:
                return None
            new, hop = served
            chain.append(hop)
            name = new
        return None

    def _served_as(self, mod: ModuleSummary, name: str) -> tuple[str, Hop] | None:
        """A lazy package's run-time class serving ``name`` under another (transformers 5's
        ``_LazyModule.__getattr__``: ``XImageProcessorFast`` -> ``XImageProcessor``, warned):
        the name and the hop through that ``__getattr__``; None when no rule of it applies."""
        if mod.runtime_class is None:
            return None
        key = (mod.name, mod.runtime_class)
        if key not in self._runtime_rules:
            self._runtime_rules[key] = getattr_rules(self, mod.name, mod.runtime_class)
        rules, file = self._runtime_rules[key]
        for rule in rules:
            new = rule.apply(name)
            if new is not None:
                return new, Hop(mod.name, name, file, rule.line, rule.how)
        return None

    def resolve_dotted(self, module: str, expr: str) -> str:
        """Canonical ``pkg.mod.Name`` for a dotted expression used inside ``module``.

        External names (not on the paths) resolve through the import table only, which is
        enough to recognise ``dataclasses.dataclass`` however it was imported.
        """
        if not expr:
            return ""
        head, _, rest = expr.partition(".")
        mod = self.module(module)
        if mod is None:
            return expr
        if head in mod.imports:
            src, attr, _ = mod.imports[head]
            base = src if attr is None else f"{src}.{attr}"
        elif head in mod.defs:
            base = f"{module}.{head}"
        else:
            return expr
        full = f"{base}.{rest}" if rest else base
        # follow re-exports when the object lives on the paths
        owner, _, leaf = full.rpartition(".")
        if owner and self.finder.find(owner.split(".")[0]) is not None:
            got = self.resolve(owner, leaf)
            if got is not None and got.node is not None:
                return f"{got.module.name}.{got.name}"
        return full


#: Texts that stand in for files on disk (``harness check --with-patches``: the environment
#: as it will be once the patch series is applied), keyed by absolute path.
OVERRIDES: dict[str, str] = {}


_REAL: dict[str, str] = {}  # OVERRIDES by real path, rebuilt when OVERRIDES grows


def override_for(path: str) -> str | None:
    """The stand-in text for a file, however it is spelled: the controller names files from
    patchops' resolved site-packages, the import path may run through a symlink."""
    if not OVERRIDES:
        return None
    if path in OVERRIDES:
        return OVERRIDES[path]
    if len(_REAL) != len(OVERRIDES):
        _REAL.clear()
        _REAL.update({os.path.realpath(k): v for k, v in OVERRIDES.items()})
    return _REAL.get(os.path.realpath(path))


def read_source(path: str) -> str:
    """Decode source as Python does (PEP 263 cookie, BOM); failures name the file."""
    import tokenize

    from probes._finder import touch

    touch(path)
    text = override_for(path)
    if text is not None:  # a file's text as it will be: decoded like the file (BOM dropped)
        return text[1:] if text.startswith("\ufeff") else text
    try:
        with tokenize.open(path) as f:
            return f.read()
    except SyntaxError as exc:  # bad coding cookie
        raise ProbeFailure("unreadable", f"{path}: {exc}", {"file": path, "line": 1}) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProbeFailure("unreadable", f"cannot read {path}: {exc}", {"file": path}) from None
