"""Which keys a ``TypedDict`` call must pass (PEP 589 totality, PEP 655 markers), and what
its instances have (a dict's names).

``Cls(key=...)`` builds the dict: an unknown key is an error, and so is a missing required
one. A key is required unless its declaring class says ``total=False`` -- each class body
decides for the keys it declares, so a base's keys keep the base's totality -- and
``Required[...]`` / ``NotRequired[...]`` on one key override its class's totality.
"""

from __future__ import annotations

import ast

from probes.signatures._syntax import dotted

#: A TypedDict's own bases: read as ``dict``, not as a base we cannot see.
TYPEDDICT_BASES = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})
#: What a TypedDict's instances have: they are plain dicts.
DICT_NAMES = frozenset(vars(dict))
#: What a model's, a struct's or a named tuple's instances have beyond the class body.
MODEL_NAMES = frozenset(("model_dump", "model_copy", "_asdict", "_replace", "_fields"))
#: Wrappers a marker may sit inside: ``Annotated[NotRequired[int], ...]``, ``ReadOnly[...]``.
_WRAPPERS = ("Annotated", "ReadOnly")


def key_default(cls: ast.ClassDef, annotation: ast.expr) -> str | None:
    """None for a required key, ``"..."`` (a stand-in default) for one that may be left out."""
    marker = _marker(annotation)
    if marker is not None:
        return None if marker == "Required" else "..."
    total = next((k.value for k in cls.keywords if k.arg == "total"), None)
    if isinstance(total, ast.Constant) and total.value is False:
        return "..."
    return None


def _marker(node: ast.expr, depth: int = 0) -> str | None:
    """``Required`` / ``NotRequired`` around the annotation, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and depth < 4:
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if not isinstance(node, ast.Subscript) or depth > 4:
        return None
    head = dotted(node.value).split(".")[-1]
    if head in ("Required", "NotRequired"):
        return head
    if head in _WRAPPERS:
        inner = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        return _marker(inner, depth + 1)
    return None


def flavour_names(flavour: tuple[str, dict[str, str]] | None) -> frozenset[str]:
    """Names every instance of a synthesised class has beyond its body (the describer's
    flavour): a model's or struct's API, and for a TypedDict a plain dict's."""
    kind = flavour[0] if flavour is not None else ""
    if kind == "typeddict":
        return DICT_NAMES
    return MODEL_NAMES if kind in ("pydantic-model", "msgspec", "namedtuple") else frozenset()
