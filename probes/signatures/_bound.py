"""Names a module binds other than with ``def`` or ``class``, and members a class gets other
than from its body -- each as the running program would see it:

- an alias, ``PretrainedConfig = PreTrainedConfig``: the same class under a second name, so
  a module's listing shows it (members and all) under both;
- a class made by a call, ``T = namedtuple("T", "a b")``, ``Color = Enum("Color", "RED")``,
  ``TD = TypedDict("TD", {...})``, ``P = NamedTuple("P", [("x", int)])``: read as the
  equivalent class statement (``made_by`` says which call made it);
- a method attached after the class body, ``Cls.push_to_hub = copy_func(Cls.push_to_hub)``
  (transformers): a member of ``Cls`` with the signature of what was attached;
- a class decorator that writes into the class (vLLM's ``@support_torch_compile``,
  huggingface_hub's ``@strict``): followed in ``_decorated``, its members added here;
- a def made with ``@functools.wraps(f)``: signs as ``f`` (``inspect`` follows
  ``__wrapped__``).
"""

from __future__ import annotations

import ast
from typing import Any

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: ``Name(...)`` calls that make a class, by the callee's last dotted part.
MAKERS = {
    "namedtuple": "collections.namedtuple",
    "NamedTuple": "typing.NamedTuple",
    "TypedDict": "typing.TypedDict",
    "Enum": "enum.Enum",
    "IntEnum": "enum.IntEnum",
    "StrEnum": "enum.StrEnum",
    "Flag": "enum.Flag",
    "IntFlag": "enum.IntFlag",
}
#: Calls that hand back a copy of the function they are given (same signature).
COPIERS = {"copy_func", "copy", "deepcopy"}


# -- (b) classes made by calls -------------------------------------------------------------
def made_class(st: ast.Assign, name: str) -> ast.ClassDef | None:
    """``name = namedtuple(...)`` & co as the class statement that makes the same class."""
    call = st.value
    if not isinstance(call, ast.Call) or not call.args:
        return None
    from probes.signatures._syntax import dotted

    leaf = dotted(call.func).rpartition(".")[2]
    if leaf not in MAKERS or not isinstance(call.args[0], ast.Constant):
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    spec = call.args[1] if len(call.args) > 1 else kw.get("field_names", kw.get("names"))
    body: list[ast.stmt] = []
    bases: list[ast.expr] = [call.func]
    members: Any = None
    if leaf == "namedtuple":
        names = _names(spec)
        if names is None:
            return None
        defaults = kw.get("defaults")
        vals = list(defaults.elts) if isinstance(defaults, (ast.Tuple, ast.List)) else []
        vals = [None] * (len(names) - len(vals)) + vals
        body = [
            _field(n, ast.Name(id="Any", ctx=ast.Load()), v)
            for n, v in zip(names, vals, strict=True)
        ]
        bases = [ast.Attribute(ast.Name("typing", ast.Load()), "NamedTuple", ast.Load())]
    elif leaf in ("NamedTuple", "TypedDict"):
        pairs = _typed_pairs(spec, call.keywords if leaf == "NamedTuple" else [])
        if pairs is None:
            return None
        body = [_field(n, ann, None) for n, ann in pairs]
    else:  # the functional Enum API: members unless the names are a literal empty sequence
        names = _names(spec)
        members = names if names is not None else spec is not None
        body = [
            ast.Assign([ast.Name(n, ast.Store())], ast.Constant(i + 1))
            for i, n in enumerate(names or [])
        ]
        if "type" in kw:
            bases.insert(0, kw["type"])
    cls = ast.ClassDef(
        name=name, bases=bases, keywords=[], body=body or [ast.Pass()], decorator_list=[]
    )
    if "type_params" in ast.ClassDef._fields:
        cls.type_params = []  # type: ignore[attr-defined]
    for node in (cls, *body):
        ast.copy_location(node, st)
        node.end_lineno, node.end_col_offset = st.end_lineno, st.end_col_offset
    if leaf == "TypedDict":
        cls.keywords = [k for k in call.keywords if k.arg == "total"]
    cls.made_by = MAKERS[leaf]  # type: ignore[attr-defined]
    cls.made_members = members  # type: ignore[attr-defined]
    return cls


def _field(name: str, ann: ast.expr, value: ast.expr | None) -> ast.AnnAssign:
    return ast.AnnAssign(ast.Name(name, ast.Store()), ann, value, simple=1)


def _names(spec: ast.AST | None) -> list[str] | None:
    """``"a b"``, ``"a, b"``, ``["a", "b"]``, ``[("a", 1)]``, ``{"a": 1}``: the names."""
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return spec.value.replace(",", " ").split()
    elts = spec.keys if isinstance(spec, ast.Dict) else getattr(spec, "elts", None)
    if elts is None or not isinstance(spec, (ast.List, ast.Tuple, ast.Dict)):
        return None
    out = []
    for e in elts:
        if isinstance(e, (ast.Tuple, ast.List)) and e.elts:
            e = e.elts[0]
        if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
            return None
        out.append(e.value)
    return out


def _typed_pairs(
    spec: ast.AST | None, keywords: list[ast.keyword]
) -> list[tuple[str, ast.expr]] | None:
    if spec is None:
        return [(k.arg, k.value) for k in keywords if k.arg]
    if isinstance(spec, ast.Dict):
        items = list(zip(spec.keys, spec.values, strict=True))
    elif isinstance(spec, (ast.List, ast.Tuple)):
        items = [tuple(e.elts) for e in spec.elts if isinstance(e, ast.Tuple) and len(e.elts) == 2]
        if len(items) != len(spec.elts):
            return None
    else:
        return None
    out = []
    for k, v in items:
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None
        out.append((k.value, v))
    return out


# -- (a) aliases in a module listing ---------------------------------------------------------
def listing(probe: Any, mod: Any) -> list[dict[str, Any]]:
    """Every public def and class of the module, and every public second name of one."""
    public = set(mod.all_names or [])
    out = []
    for name, node in mod.defs.items():
        if name.startswith("_") and name not in public:
            continue
        if isinstance(node, (*FUNCS, ast.ClassDef)):
            out.append(probe._symbol(mod, node, name))
            continue
        if not isinstance(node, ast.Assign) or name in mod.imports:
            continue
        made = made_symbol(probe, mod, node, name)
        if made is not None:
            out.append(made)
            continue
        got = probe.index.resolve(mod.name, name)
        if got is None or got.module is not mod or got.name == name:
            continue
        if isinstance(got.node, (*FUNCS, ast.ClassDef)):
            sym = probe._symbol(mod, got.node, got.name)
            sym.update(qualname=name, alias_of=got.name, line=node.lineno)
            sym["end_line"] = node.end_lineno or node.lineno
            sym["doc"] = f"{name} = {got.name}: a second name for the same object"
            out.append(sym)
    out.sort(key=lambda s: s["line"])
    return out


def made_symbol(probe: Any, mod: Any, node: ast.Assign, name: str) -> dict[str, Any] | None:
    """``name = factory(...)`` where the factory returns a def or class it defines
    (``_factory``): described as that def or class, under ``name``, ``made_by`` the factory."""
    from probes.signatures._factory import made_class, made_function

    call = node.value
    if not isinstance(call, ast.Call) or not isinstance(mod.defs.get(name), ast.Assign):
        return None
    fn = made_function(probe.classes, mod, call)
    if fn is not None:
        fmod, local, by, wrapped_arg = fn
        owner, _, leaf = (wrapped_arg or "").rpartition(".")
        got = probe.index.resolve(owner, leaf) if owner else None
        if local is None:  # the factory hands its argument back: that object, a second name
            if got is None or not isinstance(got.node, (*FUNCS, ast.ClassDef)):
                return None
            by = probe.index.resolve_dotted(mod.name, ast.unparse(call.func))
            sym = probe._symbol(got.module, got.node, name)
            sym["alias_of"] = wrapped_arg
        else:
            sym = probe._symbol(fmod, local, name)
            if got is not None and isinstance(got.node, FUNCS):  # ``@wraps(fn)`` on the def
                sym["parameters"] = describe_params(got.module, got.node)
                sym["wrapped"] = wrapped_arg
    else:
        cls = made_class(probe.classes, mod, call)
        if cls is None:
            return None
        by = probe.index.resolve_dotted(mod.name, ast.unparse(call.func))
        sym = probe._symbol(cls[0], cls[1], name)
    sym.update(made_by=by, line=node.lineno, end_line=node.end_lineno or node.lineno)
    sym.update(module=mod.name, file=probe.index.rel(mod.loc.file))
    return sym


def bound_method(describer: Any, mod: Any, node: ast.Assign) -> tuple[Any, Any, str] | None:
    """``f = api.method`` at module level, ``api = Cls(...)`` there too (huggingface_hub's
    ``model_info = api.model_info``): ``(module, def, what)`` of the method the name is bound
    to -- it signs without ``self`` (or ``cls``); None for anything else."""
    from probes.signatures._syntax import dotted

    v = node.value
    if not (isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)):
        return None
    made = mod.defs.get(v.value.id)
    if not (isinstance(made, ast.Assign) and isinstance(made.value, ast.Call)):
        return None
    owner = describer._resolve_class(mod.name, dotted(made.value.func))
    found = _in_mro(describer, owner, v.attr, 0, frozenset()) if owner else None
    if found is None or not isinstance(found[1], FUNCS):
        return None
    return found[0], found[1], f"{v.value.id}.{v.attr}: {owner[1].name}.{v.attr}, bound"


def describe_params(mod: Any, fn: Any) -> list[dict[str, Any]]:
    from probes.signatures._describe import parameters

    return parameters(fn.args, mod.src)


# -- (d) methods attached after the class body -------------------------------------------
def attached(mod: Any) -> dict[str, list[tuple[str, ast.expr, int]]]:
    """``Cls.name = value`` statements at module level, by class name (cached per module)."""
    got = mod.__dict__.get("_attached")
    if got is None:
        got = {}
        for st in mod.tree.body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
                continue
            t = st.targets[0]
            owner = (
                t.value.id if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) else ""
            )
            if isinstance(mod.defs.get(owner), ast.ClassDef):
                got.setdefault(t.value.id, []).append((t.attr, st.value, st.lineno))
        mod.__dict__["_attached"] = got
    return got


def _function_of(
    describer: Any, mod: Any, value: ast.expr, depth: int = 0, seen: frozenset = frozenset()
) -> tuple[Any, Any, str, int]:
    """(module, def or lambda, kind, dropped) that ``value`` evaluates to, or (None, None, "",
    0). ``dropped`` is 1 for a classmethod read off its class (``Base.from_config``): a bound
    method, which signs without its first parameter -- and so does a copy or a
    ``functools.wraps`` of it, through ``__wrapped__``."""
    from probes.signatures._syntax import dotted

    if isinstance(value, ast.Lambda):
        return mod, value, "", 0
    if isinstance(value, ast.Call) and len(value.args) == 1 and depth < 4:
        leaf = dotted(value.func).rpartition(".")[2]
        if leaf in COPIERS or leaf in ("staticmethod", "classmethod"):
            m, fn, kind, drop = _function_of(describer, mod, value.args[0], depth + 1, seen)
            return m, fn, leaf if leaf in ("staticmethod", "classmethod") else kind, drop
        return None, None, "", 0
    if isinstance(value, ast.Name):
        got = describer.index.resolve(mod.name, value.id)
        if got is not None and isinstance(got.node, FUNCS):
            return got.module, got.node, "", 0
    elif isinstance(value, ast.Attribute) and dotted(value.value):
        owner = describer._resolve_class(mod.name, dotted(value.value))
        found = _in_mro(describer, owner, value.attr, depth, seen) if owner else None
        if found is not None:
            bound = isinstance(found[1], FUNCS) and _is_classmethod(found[1])
            return found[0], found[1], "", int(bound)
    return None, None, "", 0


def _is_classmethod(fn: Any) -> bool:
    from probes.signatures._syntax import dotted

    return any(dotted(d).rpartition(".")[2] == "classmethod" for d in fn.decorator_list)


def _in_mro(
    describer: Any, owner: tuple[Any, ast.ClassDef], name: str, depth: int, seen: frozenset
) -> Any:
    """Where ``Cls.name`` is defined: the body, an attachment (not the one being read:
    ``Cls.m = copy_func(Cls.m)`` reads the binding before it), else the bases."""

    mod, cls = owner
    key = (mod.name, cls.name, name)
    if key not in seen:
        for attr, value, _ in reversed(attached(mod).get(cls.name, [])):
            if attr == name:
                got = _function_of(describer, mod, value, depth + 1, seen | {key})
                return got[:2] if got[1] is not None else None
    for st in reversed(cls.body):
        if isinstance(st, FUNCS) and st.name == name:
            return mod, st
    for b in cls.bases if depth < 10 else []:
        base = describer.base_class(mod, b)
        found = _in_mro(describer, base, name, depth + 1, seen) if base else None
        if found is not None:
            return found
    return None


def extend(describer: Any, mod: Any, cls: ast.ClassDef, qualname: str, members: list[dict]) -> None:
    """Add (or replace) the members that attachments after the body and decorators set."""
    from probes.signatures._decorated import decorator_effects
    from probes.signatures._describe import describe_function

    def put(name: str, m: Any, fn: Any, kind: str, why: str, by: str, drop: int = 0) -> None:
        if isinstance(fn, ast.Lambda):
            fn = ast.copy_location(ast.FunctionDef(name, fn.args, [], [], None), fn)
            fn.end_lineno = fn.lineno
        d = wrapped(describer, m, fn, describe_function(fn, "", True, [], m.src))
        d["parameters"] = d["parameters"][drop:]
        d["qualname"] = f"{qualname}.{name}"
        d["kind"] = kind or d["kind"]
        d["doc"] = why
        d["changed_by"] = by
        members[:] = [x for x in members if x["qualname"] != d["qualname"]] + [d]

    body = {st.name: st for st in cls.body if isinstance(st, FUNCS)}
    for x in members:  # ``@functools.wraps(f)`` on a method: f's signature
        fn = body.get(x["qualname"].rpartition(".")[2])
        if fn is not None and any("wraps" in d for d in x.get("decorators") or ()):
            wrapped(describer, mod, fn, x)
    for name, m, fn, wraps, full, value in decorator_effects(describer, mod, cls):
        if fn is None:  # ``cls.from_config = classmethod(copy_func(Base.from_config))``
            m, fn, kind, drop = _function_of(describer, m, value)
            if fn is not None:
                put(name, m, fn, kind, f"set by {full}", full, drop)
        elif wraps:
            for x in members:
                if x["qualname"] == f"{qualname}.{name}":
                    x["changed_by"] = full  # wrapped: the signature stays the original's
        else:
            put(name, m, fn, "", f"set by @{full}", full)
    for name, value, line in attached(mod).get(cls.name, []):
        m, fn, kind, drop = _function_of(
            describer, mod, value, 0, frozenset({(mod.name, cls.name, name)})
        )
        if fn is not None:
            put(name, m, fn, kind, f"attached at line {line}", f"line {line}", drop)


def wrapped(describer: Any, mod: Any, fn: Any, d: dict, depth: int = 0) -> dict:
    """A def made with ``@functools.wraps(original)`` signs as the original does
    (``inspect.signature`` follows ``__wrapped__``): take its parameters when we can read it."""
    from probes.signatures._describe import describe_function
    from probes.signatures._syntax import dotted

    for deco in fn.decorator_list:
        if not (
            isinstance(deco, ast.Call) and deco.args and dotted(deco).rpartition(".")[2] == "wraps"
        ):
            continue
        m, orig, _, drop = _function_of(describer, mod, deco.args[0])
        if isinstance(orig, FUNCS) and orig is not fn and depth < 4:
            inner = wrapped(
                describer, m, orig, describe_function(orig, "", True, [], m.src), depth + 1
            )
            d["parameters"] = inner["parameters"][drop:]
            d["wrapped"] = ast.unparse(deco.args[0])
    return d
