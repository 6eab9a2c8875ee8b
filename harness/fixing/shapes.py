"""When two descriptions are "the same thing": a compatible move, a rename of the same shape.

Pure, over :class:`~harness.models.Symbol`; parameter changes come from the diff's own records
(:func:`harness.analysis.apidiff.compare_parameters`), so ``check --fix`` and ``harness diff``
never disagree about what changed.
"""

from __future__ import annotations

from harness.analysis.apidiff import ChangeKind, compare_parameters, normalize_annotation
from harness.fixing.model import own_parameters
from harness.models import Symbol, SymbolKind

#: Parameter changes a moved symbol may carry and still be the same symbol: the calls that
#: pass a removed parameter (or rely on a shifted position) get their own finding at the
#: re-check, where they are judged on their own.
_TOLERATED = {
    ChangeKind.PARAMETER_REMOVED,
    ChangeKind.PARAMETER_MOVED,
    ChangeKind.PARAMETER_ADDED,
    ChangeKind.PARAMETER_DEFAULT_CHANGED,
    ChangeKind.PARAMETER_ANNOTATION_CHANGED,
}


def incompatibility(old: Symbol, new: Symbol) -> str | None:
    """Why ``new`` is not ``old`` moved elsewhere, or None when it is compatible.

    Compatible: same kind, both or neither async, and no parameter that a call written for
    ``old`` could not have known about: no new required parameter, none made required, none
    of another kind. Removed or shifted parameters are tolerated -- the calls they break are
    reported by the re-check on their own.
    """
    if old.kind != new.kind:
        return f"it is a {new.kind} now (was a {old.kind})"
    if old.is_async != new.is_async:
        return "async changed" if new.is_async else "it is not async any more"
    if old.parameters is None or new.parameters is None:
        return "its signature cannot be read on both sides"
    bad = [
        c
        for c in compare_parameters(own_parameters(old), own_parameters(new))
        if c.kind not in _TOLERATED
    ]
    if bad:
        return "; ".join(c.describe() for c in bad[:3])
    return None


def _norm_default(text: str | None) -> str | None:
    return None if text is None else (normalize_annotation(text) or text)


def _params_key(sym: Symbol) -> list[tuple[str, str, str | None]] | None:
    if sym.parameters is None:
        return None
    return [(p.name, p.kind, _norm_default(p.default)) for p in own_parameters(sym)]


def same_shape(old: Symbol, new: Symbol) -> bool:
    """Same kind, same parameters (names, kinds, defaults) and, for classes, the same public
    methods with the same parameters."""
    if old.kind != new.kind or old.is_async != new.is_async:
        return False
    a, b = _params_key(old), _params_key(new)
    if a is None or a != b:
        return False
    if old.kind == SymbolKind.CLASS:
        return public_methods(old) == public_methods(new)
    return True


def distinctive(sym: Symbol) -> bool:
    """Is the shape worth anything as evidence? ``f()`` matches every other ``g()``."""
    return bool(own_parameters(sym)) or (sym.kind == SymbolKind.CLASS and bool(public_methods(sym)))


def public_methods(sym: Symbol) -> dict[str, object]:
    """Public method name -> its parameters (what a caller of the class can notice)."""
    return {
        m.qualname.rsplit(".", 1)[-1]: _params_key(m)
        for m in sym.members
        if m.kind != SymbolKind.CLASS and not m.qualname.rsplit(".", 1)[-1].startswith("_")
    }


#: Words too common to relate two names ("get_model_path" is no rename of "try_get_dense").
_GENERIC = frozenset(
    {"get", "set", "is", "has", "make", "build", "create", "new", "old", "init", "to", "from"}
    | {"of", "for", "with", "and", "or", "the", "a", "an", "do", "run", "impl", "fake", "try"}
    | {"base", "default"}
)
#: Words whose presence on one side only means the meaning flipped, not the name.
POLARITY = frozenset(
    {"no", "not", "non", "un", "disable", "disabled", "enable", "enabled", "without", "with"}
    | {"skip", "ignore", "exclude", "include", "allow", "deny", "off", "on"}
)


def words(name: str) -> frozenset[str]:
    """``load_config`` -> {load, config}; ``HTTPSession`` -> {http, session}."""
    import re

    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)
    return frozenset(p.lower() for p in parts)


def related(old: str, new: str) -> bool:
    """Do two names plausibly name one thing? A shared word (not a generic one) or a near
    spelling (a typo fixed: ``Seperable`` -> ``Separable``)."""
    import difflib

    if (words(old) & words(new)) - _GENERIC:
        return True
    return difflib.SequenceMatcher(None, old.lower(), new.lower()).ratio() >= 0.8


def flipped(old: str, new: str) -> bool:
    """``disable_log`` -> ``enable_log``: a rename by position that inverts the meaning."""
    return bool((words(old) ^ words(new)) & POLARITY)


def same_default(a: str | None, b: str | None) -> bool:
    return _norm_default(a) == _norm_default(b)
