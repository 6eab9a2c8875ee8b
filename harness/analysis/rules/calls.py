"""Calls that no longer bind: each callee call's shape bound the way CPython binds.

Functions, constructors (every rule the probe synthesises), overloads (fine if any binds),
``__new__`` + ``__init__`` (both must bind), and ``f(**opts)`` with the dict's keys known (a
key added under a condition says so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.analysis.bind import BindProblem, CallShape, bind, bind_any
from harness.analysis.findings import ERROR
from harness.analysis.rules.attributes import missing
from harness.analysis.uses import ref_key
from harness.models import Parameter

if TYPE_CHECKING:
    from harness.analysis.check import Checker

Json = dict[str, Any]


def run(ck: Checker) -> None:
    for use in ck.scan.get("calls") or []:
        key = ref_key(use["ref"])
        entry = ck.symbols.get(key) or {}
        sym = ck._sym(key)
        if sym is None:
            if use.get("on_instance"):
                continue  # reported once as missing-attribute
            if any(
                f == use["file"] and (key == k or key.startswith(k + "."))
                for f, k in ck.failed_imports
            ):
                continue  # the failed import already says it
            if entry.get("module_only"):
                continue
            missing(ck, use, key, entry)
            continue
        got = call_variants(sym, use)
        if got is None:
            continue
        variants, lenient = got
        init = (sym.get("constructor") or {}).get("init_parameters")
        init_params = None if init is None else tuple(Parameter.from_dict(p) for p in init)
        spread = use["shape"].get("spread_keys")
        keywords = tuple(use["shape"]["keywords"])

        def problems_for(kws: tuple[str, ...]) -> list[BindProblem]:
            return bind_call(use["shape"], kws, variants, lenient, init_params)  # noqa: B023

        when: dict[str, str] = {}
        if spread is None:
            problems = problems_for(keywords)
        else:  # ``f(**opts)`` with opts' keys known: every key, and each branch's
            when = {k["key"]: k["when"] for k in spread if k.get("when")}
            every = keywords + tuple(k["key"] for k in spread)
            always = keywords + tuple(k["key"] for k in spread if not k.get("when"))
            problems = [p for p in problems_for(every) if p.category != "missing-required-arg"]
            problems += [p for p in problems_for(always) if p.category == "missing-required-arg"]
        if (sym.get("constructor") or {}).get("extra") == "unknown":
            # fields of a base we cannot read come first: the positional count is unknown
            problems = [p for p in problems if p.category != "too-many-positional"]
        name = sym["qualname"]
        for p in problems:
            cond = [when[n] for n in p.names if n in when]
            note = ""
            if cond and p.category == "missing-required-arg":
                note = f" (unless `{cond[0]}`: only then does the dict carry it)"
            elif cond:
                note = f" (the dict gets it when `{cond[0]}`)"
            elif spread is not None and any(n in {k["key"] for k in spread} for n in p.names):
                note = " (a key of the dict spread with **)"
            ck._add(
                ERROR,
                p.category,
                use,
                key,
                f"{name}() {p.detail}{note}",
                fix(p.category, p.names, name, sym),
                sym,
            )


def call_variants(sym: Json, use: Json) -> tuple[list[tuple[Parameter, ...]], bool] | None:
    """Parameter lists a call can bind to (self/cls removed), and whether extras pass."""
    kind = sym.get("kind")
    if kind == "class":
        ctor = sym.get("constructor") or {}
        params = _params(sym.get("parameters"))
        if params is None:
            return None
        variants = [params] + [
            tuple(Parameter.from_dict(p) for p in o) for o in ctor.get("overloads") or []
        ]
        return variants, ctor.get("extra") in ("ignore", "allow", "unknown")
    if kind in ("function", "method", "classmethod", "staticmethod"):
        raw = [sym.get("parameters") or []] + [
            o.get("parameters") or [] for o in sym.get("overloads") or []
        ]
        if sym.get("overloads"):
            raw = raw[1:]  # the implementation is not callable as written; overloads are
        drop = 0
        if kind == "classmethod" or (kind == "method" and use.get("on_instance")):
            drop = 1
        return [tuple(Parameter.from_dict(p) for p in r[drop:]) for r in raw], False
    return None


def bind_call(
    shape: Json,
    keywords: tuple[str, ...],
    variants: list[tuple[Parameter, ...]],
    lenient: bool,
    init: tuple[Parameter, ...] | None,
) -> list[BindProblem]:
    """Pure: problems binding a call (with these keywords) to any variant, and to the
    ``__init__`` a ``__new__(cls, *a, **k)`` hands everything on to."""
    call = CallShape(shape["positional"], keywords, shape["star"], shape["double_star"])
    found = bind_any(call, variants, ignore_unknown_kwargs=lenient)
    if not found and init is not None:
        found = bind(call, init)
    return found


def fix(category: str, names: tuple[str, ...], func: str, sym: Json) -> str:
    listed = ", ".join(names)
    return {
        "unexpected-kwarg": f"Drop or rename {listed}: {func} takes no such parameter now.",
        "missing-required-arg": f"Pass {listed}: {func} now requires "
        f"{'them' if len(names) > 1 else 'it'}.",
        "too-many-positional": f"Pass fewer positional arguments to {func}, or name them.",
        "positional-only-as-keyword": f"Pass {listed} positionally to {func}.",
        "duplicate-argument": f"{listed} is given both by position and by name; keep one.",
    }.get(category, f"Match the call to {func}'s signature.")


def _params(raw: list[Json] | None) -> tuple[Parameter, ...] | None:
    return None if raw is None else tuple(Parameter.from_dict(p) for p in raw)
