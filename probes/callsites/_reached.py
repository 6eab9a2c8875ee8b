"""What the checker needs of a name the caller reaches through its own class (``_receivers``).

Its members, looked up where the callee classes lack the name (:func:`reached_members`), and
the names the callee stores on objects it is handed (:func:`mark_stored`).

scikit-learn 1.6 moved ``BaseEstimator._check_n_features`` to a function of ``utils/validation``
that runs ``estimator.n_features_in_ = n_features`` on the estimator it is given: the class no
longer binds ``n_features_in_``, yet every fitted estimator has it. A name read through the
caller's own class (``self.n_features_in_``, reached on the callee base) that the callee's source
stores on some object other than ``self`` may be on the instance whatever its class defines, so
its absence from the class is no break (``stored``), with or without a baseline -- nor on an
instance of the callee's class (``fitted.n_features_in_``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from probes.callsites._fits import package_files

if TYPE_CHECKING:
    from probes.signatures._lookup import Lookup

#: the ways through the caller's own class (``_receivers``)
REACHED = ("inherited", "forwarded")
#: the reads a stored name excuses: those, and reads on a known callee instance
STORABLE = (*REACHED, "instance", "narrowed")
_SKIP = (b"self", b"cls")


def reached_members(
    attributes: list[dict[str, Any]], symbols: dict[str, Any], lookup: Lookup
) -> dict[str, Any]:
    """A name read through a caller class (inherited, or forwarded by its ``__getattr__``)
    that the callee class lacks now: looked up as a member too, so the baseline says where
    the release the caller was written for defined it. The chain's other callee bases
    (``also``) are looked up themselves: the checker needs them all."""
    out: dict[str, Any] = {}
    for a in attributes:
        if a["on"] not in REACHED:
            continue
        for module, qual in [a["ref"][1:3], *a.get("also", ())]:
            if f"{module}:{qual}" not in symbols and f"{module}:{qual}" not in out:
                out[f"{module}:{qual}"] = lookup.ref(module, qual)
            got = symbols.get(f"{module}:{qual}") or out.get(f"{module}:{qual}") or {}
            sym = got.get("symbol") or {}
            key = f"{module}:{qual}.{a['attr']}"
            if a["attr"] not in (sym.get("mro_members") or ()) and key not in out:
                out[key] = lookup.ref(module, f"{qual}.{a['attr']}")
    return out


def mark_stored(
    attributes: list[dict[str, Any]], symbols: dict[str, Any], folders: list[str]
) -> None:
    """Set ``stored`` ("file:line") on each reached use whose name the callee's packages
    (``folders``) store on an object other than ``self``/``cls``, or ``setattr`` by name.
    Only names no callee class of the use binds are searched: the packages are read for
    those alone, and most scans have none."""
    names = sorted({a["attr"] for a in attributes if _lacking(a, symbols)})
    if not names or not folders:
        return
    alt = b"|".join(re.escape(n.encode()) for n in names)
    store = re.compile(rb"([A-Za-z_][\w.]*)\.(" + alt + rb")\s*(?::[^=\n]+)?=(?!=)")
    named = re.compile(rb"setattr\(\s*[^,()]+,\s*[\"'](" + alt + rb")[\"']")
    needles = [n.encode() for n in names]
    where: dict[str, str] = {}
    for path, rel in package_files(folders):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if not any(n in data for n in needles):
            continue
        for m in store.finditer(data):
            if m.group(1).rsplit(b".", 1)[-1] in _SKIP and b"." not in m.group(1):
                continue
            where.setdefault(m.group(2).decode(), f"{rel}:{_line(data, m.start())}")
        for m in named.finditer(data):
            where.setdefault(m.group(1).decode(), f"{rel}:{_line(data, m.start())}")
    for a in attributes:
        if a.get("on") in STORABLE and a["attr"] in where:
            a["stored"] = where[a["attr"]]


def _line(data: bytes, at: int) -> int:
    return data.count(b"\n", 0, at) + 1


def _lacking(a: dict[str, Any], symbols: dict[str, Any]) -> bool:
    """Is ``a`` a reached use whose callee classes (``symbols``) all lack its name?"""
    if a.get("on") not in STORABLE or a["attr"].startswith("__"):
        return False
    for module, qual in [a["ref"][1:3], *a.get("also", ())]:
        sym = (symbols.get(f"{module}:{qual}") or {}).get("symbol") or {}
        if not sym or a["attr"] in (sym.get("mro_members") or ()):
            return False
    return True
