"""From the callsites probe's data to findings: imports, calls, attributes, overrides, drift.

Pure: data in, findings out. Every error here is something that raises at run time; anything
we cannot be sure of is at most a warning or info, so the list stays trustworthy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.analysis.apidiff import Change, compare_symbols
from harness.analysis.bind import BindProblem, CallShape, bind, bind_any
from harness.analysis.findings import ERROR, INFO, WARNING, Finding
from harness.analysis.rules import defaults, forwards, installs, returns
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
    Symbol,
)

Json = dict[str, Any]


def _key(ref: list[Any] | tuple[Any, ...]) -> str:
    return f"{ref[1]}:{ref[2]}" if ref[0] != "module" else str(ref[1])


def _params(raw: list[Json] | None) -> tuple[Parameter, ...] | None:
    return None if raw is None else tuple(Parameter.from_dict(p) for p in raw)


class Checker:
    def __init__(
        self,
        scan: Json,
        callee_versions: dict[str, str | None],
        baseline: dict[str, Json] | None = None,
        baseline_fits: dict[str, Json] | None = None,
    ) -> None:
        self.scan = scan
        self.symbols: dict[str, Json] = scan.get("symbols") or {}
        self.versions = callee_versions
        self.baseline = baseline
        self.baseline_fits = baseline_fits
        self.findings: list[Finding] = []
        self._failed_imports: set[tuple[str, str]] = set()  # (file, local symbol key)

    # -- helpers --------------------------------------------------------------------------
    def _sym(self, key: str) -> Json | None:
        got = self.symbols.get(key) or {}
        return got.get("symbol") if got.get("found") else None

    def base_sym(self, key: str) -> Json | None:
        """The symbol as the baseline version defines it (None: no baseline, or absent)."""
        got = (self.baseline or {}).get(key) or {}
        return got.get("symbol") if got.get("found") else None

    def _version(self, module: str) -> str:
        top = module.split(".")[0]
        v = self.versions.get(top)
        return f"{top} {v}" if v else top

    def _add(
        self,
        severity: str,
        category: str,
        use: Json,
        symbol: str,
        message: str,
        fix: str,
        sym: Json | None = None,
        changes: tuple[Json, ...] = (),
    ) -> None:
        sig = None
        if sym is not None:
            s = Symbol.from_dict(sym)
            sig = f"{s.qualname}{s.signature}" if s.kind != "variable" else s.qualname
        self.findings.append(
            Finding(
                severity=severity,
                category=category,
                file=use["file"],
                line=use["line"],
                source=use.get("source", ""),
                symbol=symbol,
                message=message,
                fix=fix,
                callee_file=sym.get("file") if sym else None,
                callee_line=sym.get("line") if sym else None,
                signature=sig,
                scope=use.get("scope", ""),
                changes=changes,
            )
        )

    # -- rules ----------------------------------------------------------------------------
    def imports(self) -> None:
        for use in self.scan.get("imports") or []:
            if use.get("ok"):
                continue
            name = use.get("name")
            what = f"{use['module']}:{name}" if name else use["module"]
            where = self._version(use["module"])
            sugg = use.get("suggestions") or []
            hint = f" Did you mean {', '.join(sugg)}?" if sugg else ""
            if name:
                self._failed_imports.add((use["file"], f"{use['module']}:{name}"))
            if use.get("guarded"):
                self._add(
                    INFO,
                    "import-guarded",
                    use,
                    what,
                    f"{what} does not exist in {where}; the import is guarded, so the "
                    "fallback branch runs",
                    "Check the fallback still does what you need." + hint,
                )
                self._unbound(use, what, where)
                self._fallback_shape(use, what)
                continue
            if use.get("dynamic"):
                self._add(
                    WARNING,
                    "unverifiable",
                    use,
                    what,
                    f"{what} is not defined statically in {where} (the module has a __getattr__)",
                    "Confirm with `harness probe --live`." + hint,
                )
                continue
            msg = (
                f"cannot import name '{name}' from '{use['module']}' ({where})"
                if name
                else f"no module named '{use['module']}' in {where}"
            )
            self._add(
                ERROR,
                "import-missing",
                use,
                what,
                msg,
                f"Import it from where {where} defines it now, or drop the use." + hint,
            )

    def _unbound(self, use: Json, what: str, where: str) -> None:
        """Uses of a name the failed guarded import left unbound: NameError when reached."""
        for site in use.get("unbound_uses") or []:
            self._add(
                ERROR,
                "unbound-name",
                site,
                what,
                f"name '{site['name']}' is not defined: `from {use['module']} import "
                f"{use['name']}` (line {use['line']}) fails on {where} and the except branch "
                "binds nothing",
                f"Bind a fallback in the except branch (e.g. {site['name']} = None) and guard "
                f"this use, or import {use['name']} from where {where} defines it now.",
            )

    def _fallback_shape(self, use: Json, what: str) -> None:
        """A ``def`` fallback must take the calls written for the callee's function."""
        fb = use.get("fallback") or {}
        if fb.get("kind") != "def":
            return
        params = tuple(Parameter.from_dict(p) for p in fb.get("parameters") or ())
        for call in self.scan.get("calls") or []:
            if call["file"] != use["file"] or _key(call["ref"]) != what:
                continue
            shape = call["shape"]
            got = bind(
                CallShape(
                    shape["positional"],
                    tuple(shape["keywords"]),
                    shape["star"],
                    shape["double_star"],
                ),
                params,
            )
            for p in got:
                self._add(
                    WARNING,
                    "import-guarded",
                    call,
                    what,
                    f"the fallback {use['local']}() (line {fb.get('line')}) runs instead of "
                    f"{what}, and this call does not fit it: {use['local']}() {p.detail}",
                    "Give the fallback the parameters of the function it stands in for.",
                )

    def _variants(self, sym: Json, use: Json) -> tuple[list[tuple[Parameter, ...]], bool] | None:
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

    def calls(self) -> None:
        for use in self.scan.get("calls") or []:
            key = _key(use["ref"])
            entry = self.symbols.get(key) or {}
            sym = self._sym(key)
            if sym is None:
                if use.get("on_instance"):
                    continue  # reported once as missing-attribute
                if any(
                    f == use["file"] and (key == k or key.startswith(k + "."))
                    for f, k in self._failed_imports
                ):
                    continue  # the failed import already says it
                if entry.get("module_only"):
                    continue
                self._missing(use, key, entry)
                continue
            got = self._variants(sym, use)
            if got is None:
                continue
            variants, lenient = got
            init = (sym.get("constructor") or {}).get("init_parameters")
            init_params = None if init is None else tuple(Parameter.from_dict(p) for p in init)
            spread = use["shape"].get("spread_keys")
            keywords = tuple(use["shape"]["keywords"])

            def problems_for(kws: tuple[str, ...]) -> list[BindProblem]:
                return _bind_call(use["shape"], kws, variants, lenient, init_params)  # noqa: B023

            when: dict[str, str] = {}
            if spread is None:
                problems = problems_for(keywords)
            else:  # ``f(**opts)`` with opts' keys known: every key, and each branch's
                when = {k["key"]: k["when"] for k in spread if k.get("when")}
                every = keywords + tuple(k["key"] for k in spread)
                always = keywords + tuple(k["key"] for k in spread if not k.get("when"))
                problems = [p for p in problems_for(every) if p.category != "missing-required-arg"]
                problems += [
                    p for p in problems_for(always) if p.category == "missing-required-arg"
                ]
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
                self._add(
                    ERROR,
                    p.category,
                    use,
                    key,
                    f"{name}() {p.detail}{note}",
                    _fix(p.category, p.names, name, sym),
                    sym,
                )

    def _opaque(self, use: Json, symbol: str, cls: Json, on_class: bool) -> None:
        """A name not found on a class whose attributes we cannot all see: never an error.

        Classes that make attributes at run time (``__getattr__``, ``setattr`` over kwargs)
        take any name: nothing to say. A base outside the import path (``torch.nn.Module``
        when torch is not on a pypi: target) may define it: say so, naming what is missing.
        """
        why = _opaque_for(cls, on_class=on_class)
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
        self._add(
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

    def _missing(self, use: Json, key: str, entry: Json) -> None:
        module, _, qual = key.partition(":")
        owner = self._sym(f"{module}:{qual.rpartition('.')[0]}") if "." in qual else None
        if owner is not None and qual.rpartition(".")[2] in (owner.get("mro_members") or ()):
            return  # a member we know from a published or stdlib base (BaseModel.model_validate)
        if owner is not None and owner.get("kind") == "class" and _opaque_for(owner, on_class=True):
            self._opaque(use, key, owner, True)
            return
        sugg = entry.get("suggestions") or []
        hint = f" Did you mean {', '.join(sugg)}?" if sugg else ""
        if entry.get("dynamic"):
            self._add(
                WARNING,
                "unverifiable",
                use,
                key,
                f"{key} is not defined statically in {self._version(module)}",
                "Confirm with `harness probe --live`." + hint,
            )
            return
        self._add(
            ERROR,
            "missing-attribute",
            use,
            key,
            f"{key} does not exist in {self._version(module)}",
            f"Find where {qual.split('.')[-1]} went (`harness diff`) and use that." + hint,
        )

    def attributes(self) -> None:
        seen: set[tuple[str, int, str]] = set()
        for use in self.scan.get("attributes") or []:
            mark = (use["file"], use["line"], use["attr"])
            if mark in seen:
                continue
            seen.add(mark)
            if use.get("on") == "module":
                key = f"{use['ref'][1]}:{use['attr']}"
                entry = self.symbols.get(key) or {}
                if not entry.get("found"):
                    self._missing(use, key, entry)
                continue
            key = _key(use["ref"])
            cls = self._sym(key)
            if cls is None:
                continue
            if use["attr"] in (cls.get("mro_members") or []) or use["attr"].startswith("__"):
                continue
            if _opaque_for(cls, on_class=use.get("on") == "class"):
                self._opaque(use, f"{key}.{use['attr']}", cls, use.get("on") == "class")
                continue
            name = cls["qualname"]
            on = "object" if use.get("on") == "instance" else "class"
            self._add(
                ERROR,
                "missing-attribute",
                use,
                f"{key}.{use['attr']}",
                f"'{name}' {on} has no attribute '{use['attr']}' ({self._version(key)})",
                f"{name} and its bases define no '{use['attr']}' any more; find its "
                "replacement with `harness diff`.",
                cls,
            )

    def overrides(self) -> None:
        for sub in self.scan.get("subclasses") or []:
            for meth in sub.get("methods") or []:
                for base in sub["bases"]:
                    key = f"{base[1]}:{base[2]}.{meth['name']}"
                    bsym = self._sym(key)
                    dunder = meth["name"].startswith("__") and meth["name"] != "__call__"
                    if bsym is None or dunder:
                        continue
                    problems = override_problems(bsym, meth)
                    issues = [text for text, _ in problems]
                    certain = any(sure for _, sure in problems)
                    old = self.base_sym(key)
                    if issues:
                        use = {**sub, "line": meth["line"], "source": sub.get("source", "")}
                        # incompatible already in the version the caller was written for: a
                        # deliberate re-signature the caller keeps the base from calling
                        was = old is not None and bool(override_issues(old, meth))
                        ver = f"{old.get('dist')} {old.get('version')}" if old else ""
                        self._add(
                            ERROR if certain and not was else WARNING,
                            "override-incompatible",
                            use,
                            key,
                            f"{sub['class']}.{meth['name']} "
                            f"{'does not accept' if was else 'no longer accepts'} what "
                            f"{bsym['qualname']} is called with: {'; '.join(issues)}"
                            + (
                                f" (already so in {ver}, the version it was written for)"
                                if was
                                else ""
                            ),
                            f"Match the override's parameters to {bsym['qualname']}'s.",
                            bsym,
                        )
                    break

    def drift(self) -> None:
        """Warn where the caller is hit by a used symbol's API moving since the baseline.

        A change counts only if some use could notice it: a parameter the caller passes (by
        name or position), a new required one, a changed return, or -- for classes the caller
        holds instances of -- a method added or removed (a new protocol step).
        """
        if self.baseline is None:
            return
        uses: dict[str, list[Json]] = {}
        for kind in ("calls", "attributes"):
            for use in self.scan.get(kind) or []:
                if use["ref"][0] != "module":
                    uses.setdefault(_key(use["ref"]), []).append(use)
        erred = {f.symbol for f in self.findings if f.severity == ERROR}
        firsts = sorted(uses.items(), key=lambda kv: (kv[1][0]["file"], kv[1][0]["line"]))
        for key, sites in firsts:
            new = self._sym(key)
            old_entry = self.baseline.get(key) or {}
            old = old_entry.get("symbol") if old_entry.get("found") else None
            if new is None or old is None:
                continue
            every = compare_symbols(old, new)
            positions = {p["name"]: i for i, p in enumerate(_old_params(old))}
            # about the symbol (returns, methods, kind): once, at the first use; about the
            # parameters: at every call they touch (the one passing a renamed parameter...)
            whole = [
                c
                for c in relevant_changes(every, sites, positions)
                if not c.kind.startswith("parameter")
            ]
            first = min(sites, key=lambda u: (u["file"], u["line"]))
            for site in sorted(sites, key=lambda u: (u["file"], u["line"])):
                own = [
                    c
                    for c in relevant_changes(every, [site], positions)
                    if c.kind.startswith("parameter") and key not in erred
                ]
                changes = (whole if site is first else []) + own
                if changes:
                    self._drift(site, key, new, old, changes)

    def _drift(self, site: Json, key: str, new: Json, old: Json, changes: list[Change]) -> None:
        text = "; ".join(c.describe() for c in changes[:6])
        more = f" (+{len(changes) - 6} more)" if len(changes) > 6 else ""
        base_v = old.get("version") or "baseline"
        self._add(
            WARNING,
            "drift",
            site,
            key,
            f"{new['qualname']} changed since {old.get('dist')} {base_v}: {text}{more}",
            "Read the new API before the run (`harness diff`); the caller was written "
            f"for {old.get('dist')} {base_v}.",
            new,
            tuple(c.to_dict() for c in changes),
        )

    def run(self) -> list[Finding]:
        for rule in RULES:
            rule(self)
        order = {ERROR: 0, WARNING: 1, INFO: 2}
        # a use seen by two rules (``Cls.meth(...)`` is a call and a class attribute) says once
        unique: dict[tuple[str, ...], Finding] = {}
        for f in self.findings:
            key = (f.file, str(f.line), f.category, f.symbol)
            unique.setdefault(key + ((f.message,) if f.category == "drift" else ()), f)
        return sorted(unique.values(), key=lambda f: (f.file, f.line, order[f.severity]))


#: Every rule, in order (later ones may read what earlier ones found, e.g. drift skips erred
#: parameters). A rule is a function of the Checker that adds findings.
RULES: tuple[Callable[[Checker], None], ...] = (
    Checker.imports,
    Checker.calls,
    forwards.run,
    Checker.attributes,
    Checker.overrides,
    Checker.drift,
    returns.run,
    defaults.run,
    installs.run,
)


def _bind_call(
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


def _old_params(sym: Json) -> list[Json]:
    """Parameters as a call passes them (``self``/``cls`` of methods left out)."""
    params = list(sym.get("parameters") or [])
    if sym.get("kind") in ("method", "classmethod") and params:
        params = params[1:]
    return params


def _opaque_for(cls: Json, *, on_class: bool) -> list[Json]:
    """Pure: why ``cls``'s member list may be incomplete for this kind of access. Attributes
    made on instances at run time (``setattr(self, ...)``, ``__getattr__``) do not appear on
    the class itself, so for ``Cls.name`` only unreadable bases count."""
    why: list[Json] = list(cls.get("mro_opaque") or [])
    if not why and not cls.get("mro_complete", True):
        why = [{"why": "base", "name": "?", "missing": ""}]  # an older payload
    return [w for w in why if w.get("why") == "base"] if on_class else why


def relevant_changes(
    changes: list[Change], sites: list[Json], positions: dict[str, int] | None = None
) -> list[Change]:
    """Pure: keep the API changes that the caller's uses of a symbol can notice.

    ``positions`` (old parameter -> index, self/cls left out): a removed or re-kinded parameter
    matters to a call passing it by name or passing that many positionals; without them, any
    positional call might reach it.
    """
    calls = [u for u in sites if "shape" in u]
    passed = {k for u in calls for k in u["shape"]["keywords"]}
    max_pos = max((u["shape"]["positional"] for u in calls), default=0)
    spread = any(u["shape"]["star"] or u["shape"]["double_star"] for u in calls)
    on_instance = any(u.get("on") == "instance" for u in sites)
    keep: list[Change] = []
    for c in changes:
        if c.kind in ("parameter-added-required", "parameter-made-required"):
            if c.name not in passed:  # a caller that now passes it is already fixed
                keep.append(c)
        elif c.kind in ("parameter-removed", "parameter-kind-changed"):
            reach = max_pos > (positions or {}).get(c.name, -1) if positions else max_pos > 0
            if spread or c.name in passed or reach:
                keep.append(c)
        elif c.kind == "parameter-moved":
            if spread or int(c.old or 0) < max_pos:
                keep.append(c)
        elif (
            (c.kind == "returns-changed" and calls)
            or (c.kind in ("method-added", "method-removed") and on_instance)
            or c.kind in ("kind-changed", "symbol-removed")
        ):
            keep.append(c)
    return keep


def _fix(category: str, names: tuple[str, ...], func: str, sym: Json) -> str:
    listed = ", ".join(names)
    return {
        "unexpected-kwarg": f"Drop or rename {listed}: {func} takes no such parameter now.",
        "missing-required-arg": f"Pass {listed}: {func} now requires "
        f"{'them' if len(names) > 1 else 'it'}.",
        "too-many-positional": f"Pass fewer positional arguments to {func}, or name them.",
        "positional-only-as-keyword": f"Pass {listed} positionally to {func}.",
        "duplicate-argument": f"{listed} is given both by position and by name; keep one.",
    }.get(category, f"Match the call to {func}'s signature.")


def override_issues(base: Json, meth: Json) -> list[str]:
    """Why an override cannot take every call its base method accepts (pure)."""
    return [text for text, _ in override_problems(base, meth)]


def override_problems(base: Json, meth: Json) -> list[tuple[str, bool]]:
    """(why, certain) for each way an override cannot take its base's calls (pure).

    Not certain: the base has more positional parameters than the override, but the extra
    ones are optional and the override's ``**kwargs`` takes them by name -- it breaks only for
    callers that pass them positionally (transformers' Trainer passes
    ``compute_loss(model, inputs, num_items_in_batch=...)`` by name).
    """
    bp = [Parameter.from_dict(p) for p in base.get("parameters") or []]
    op = [Parameter.from_dict(p) for p in meth.get("parameters") or []]
    if base.get("kind") in ("method", "classmethod") and bp:
        bp = bp[1:]
    if meth.get("kind") in ("method", "classmethod") and op:
        op = op[1:]
    issues: list[tuple[str, bool]] = []
    o_var_pos = any(p.kind == VAR_POSITIONAL for p in op)
    o_var_kw = any(p.kind == VAR_KEYWORD for p in op)
    o_pos = [p for p in op if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    o_names = {p.name for p in op if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
    b_pos = [p for p in bp if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    if len(b_pos) > len(o_pos) and not o_var_pos:
        extra = b_pos[len(o_pos) :]
        by_name = all(
            not q.required and q.kind != POSITIONAL_ONLY and (o_var_kw or q.name in o_names)
            for q in extra
        )
        issues.append(
            (
                f"takes {len(o_pos)} positional arguments, base passes up to {len(b_pos)}"
                + (" (if the optional ones are passed by position)" if by_name else ""),
                not by_name,
            )
        )
    for p in bp:
        if (
            p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)
            and p.name not in o_names
            and not o_var_kw
        ):
            issues.append((f"no parameter '{p.name}'", True))
    b_names = {p.name for p in bp}
    for p in op:
        if p.required and p.name not in b_names and p.kind != POSITIONAL_ONLY:
            issues.append((f"requires '{p.name}', which the base never passes", True))
    return issues
