"""Names missing on modules and on known classes and instances -- never on classes we cannot
fully see (open classes take any name; unreadable bases make it ``unverifiable``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.analysis.findings import ERROR, WARNING
from harness.analysis.uses import ref_key

if TYPE_CHECKING:
    from harness.analysis.check import Checker

Json = dict[str, Any]


def run(ck: Checker) -> None:
    seen: set[tuple[str, int, str]] = set()
    for use in ck.scan.get("attributes") or []:
        mark = (use["file"], use["line"], use["attr"])
        if mark in seen:
            continue
        seen.add(mark)
        if use.get("on") == "module":
            key = f"{use['ref'][1]}:{use['attr']}"
            entry = ck.symbols.get(key) or {}
            if not entry.get("found"):
                missing(ck, use, key, entry)
            continue
        key = ref_key(use["ref"])
        cls = ck._sym(key)
        if cls is None:
            continue
        if use["attr"] in (cls.get("mro_members") or []) or use["attr"].startswith("__"):
            continue
        if opaque_for(cls, on_class=use.get("on") == "class"):
            opaque(ck, use, f"{key}.{use['attr']}", cls, use.get("on") == "class")
            continue
        name = cls["qualname"]
        on = "object" if use.get("on") == "instance" else "class"
        ck._add(
            ERROR,
            "missing-attribute",
            use,
            f"{key}.{use['attr']}",
            f"'{name}' {on} has no attribute '{use['attr']}' ({ck._version(key)})",
            f"{name} and its bases define no '{use['attr']}' any more; find its "
            "replacement with `harness diff`.",
            cls,
        )


def missing(ck: Checker, use: Json, key: str, entry: Json) -> None:
    module, _, qual = key.partition(":")
    owner = ck._sym(f"{module}:{qual.rpartition('.')[0]}") if "." in qual else None
    if owner is not None and qual.rpartition(".")[2] in (owner.get("mro_members") or ()):
        return  # a member we know from a published or stdlib base (BaseModel.model_validate)
    if owner is not None and owner.get("kind") == "class" and opaque_for(owner, on_class=True):
        opaque(ck, use, key, owner, True)
        return
    sugg = entry.get("suggestions") or []
    hint = f" Did you mean {', '.join(sugg)}?" if sugg else ""
    if entry.get("dynamic"):
        ck._add(
            WARNING,
            "unverifiable",
            use,
            key,
            f"{key} is not defined statically in {ck._version(module)}",
            "Confirm with `harness probe --live`." + hint,
        )
        return
    ck._add(
        ERROR,
        "missing-attribute",
        use,
        key,
        f"{key} does not exist in {ck._version(module)}",
        f"Find where {qual.split('.')[-1]} went (`harness diff`) and use that." + hint,
    )


def opaque(ck: Checker, use: Json, symbol: str, cls: Json, on_class: bool) -> None:
    """A name not found on a class whose attributes we cannot all see: never an error.

    Classes that make attributes at run time (``__getattr__``, ``setattr`` over kwargs)
    take any name: nothing to say. A base outside the import path (``torch.nn.Module``
    when torch is not on a pypi: target) may define it: say so, naming what is missing.
    """
    why = opaque_for(cls, on_class=on_class)
    if not why or any(w.get("why") in ("getattr", "open") for w in why):
        return
    attr = symbol.rsplit(".", 1)[-1]
    bases = ", ".join(dict.fromkeys(w["name"] for w in why))
    gone = sorted({w["missing"] for w in why if w.get("missing")})
    where = (
        f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} not installed here"
        if gone
        else "it cannot be read statically"
    )
    ck._add(
        WARNING,
        "unverifiable",
        use,
        symbol,
        f"'{cls['qualname']}' and the bases we can read define no '{attr}'; it may come "
        f"from {bases} ({where})",
        "Install the missing dists on the target (for pypi:, add them to the spec) or "
        "confirm with `harness probe --live`.",
        cls,
    )


def opaque_for(cls: Json, *, on_class: bool) -> list[Json]:
    """Pure: why ``cls``'s member list may be incomplete for this kind of access. Attributes
    made on instances at run time (``setattr(self, ...)``, ``__getattr__``) do not appear on
    the class itself, so for ``Cls.name`` only unreadable bases count."""
    why: list[Json] = list(cls.get("mro_opaque") or [])
    if not why and not cls.get("mro_complete", True):
        why = [{"why": "base", "name": "?", "missing": ""}]  # an older payload
    return [w for w in why if w.get("why") == "base"] if on_class else why
