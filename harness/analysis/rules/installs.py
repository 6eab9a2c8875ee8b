"""A caller function installed as a method of a callee object, that no longer fits it.

speculators' ``_patched_forward(self, ...)`` reads ``self.get_input_embeddings``,
``self.layers``, ``self.norm``, ``self.start_layer`` and ``self.end_layer`` and is installed
with ``base_model.forward = types.MethodType(_patched_forward, base_model)``. Where the object's
class is known (``Cls.method = f``, or a known instance) a missing attribute is an error. Where
it is not -- usually: here it comes from the model runner -- the sound statement is about the
classes it can be: those that, in the baseline, define every attribute the function reads.
Each of them that lacks one in the installed version is named, with a likely rename (a method
that appeared with the same parameters). That is a warning: the object may be of a class
outside the callee.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from harness.analysis.apidiff import Change, ChangeKind
from harness.analysis.facts import FitClass, Fits
from harness.analysis.findings import Category, Finding, Severity
from harness.models import Symbol, SymbolKind

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context
    from harness.analysis.uses import Install


def lost(new: Fits, old: Fits) -> dict[str, list[tuple[FitClass, FitClass]]]:
    """Pure: attribute -> (installed class, baseline class) that fitted and now lack it.

    A class whose bases (found by name in the package) may define the attribute is left
    out: kept only when every base was found and none defines it.
    """
    before = {c.key: c for c in old.full}
    out: dict[str, list[tuple[FitClass, FitClass]]] = {}
    for c in new.near:
        b = before.get(c.key)
        if b is None or c.inherits is not False:
            continue  # never fitted, or a base may define the attribute (or was not found)
        out.setdefault(c.missing[0], []).append((c, b))
    return out


def renames(attr: str, pairs: list[tuple[FitClass, FitClass]]) -> list[tuple[str, int]]:
    """Pure: methods that appeared with the parameters ``attr`` had, most frequent first."""
    votes: Counter[str] = Counter()
    for new, old in pairs:
        params = old.methods.get(attr)
        if params is None:
            continue
        for name, ps in new.methods.items():
            if name not in old.methods and ps == params:
                votes[name] += 1
    return votes.most_common(2)


def exact(ctx: Context) -> list[Finding]:
    """Functions installed on a known class that read attributes it does not define."""
    return [f for ins in ctx.scan.installs if ins.target for f in _exact(ctx, ins)]


def _exact(ctx: Context, ins: Install) -> list[Finding]:
    cls = ctx.callee(ins.target or "")
    if cls is None or not cls.mro_complete:
        return []
    members = set(cls.mro_members)
    out: list[Finding] = []
    for attr in ins.attrs:
        if attr in members:
            continue
        f = ctx.finding(
            Severity.ERROR,
            Category.MISSING_ATTRIBUTE,
            ins,
            f"{ins.target}.{attr}",
            f"{ins.function}() (line {ins.function_line}) is installed on {cls.qualname} "
            f"and reads self.{attr} (line {ins.attr_lines.get(attr)}), which "
            f"{cls.qualname} and its bases do not define ({ctx.version_of(cls.module)})",
            f"Find what replaced {attr} on {cls.qualname} (`harness diff`) and use it.",
            cls,
            attribute=attr,
        )
        out.append(f)
    return out


def installs_drift(ctx: Context) -> list[Finding]:
    """Installed functions whose likely classes lost an attribute they read (no known class)."""
    out: list[Finding] = []
    for ins in ctx.scan.installs:
        if ins.target:
            continue
        if ctx.baseline_fits is None or not ins.attrs:
            continue
        new = ctx.scan.fits.get(ins.key) or Fits((), ())
        old = ctx.baseline_fits.get(ins.key) or Fits((), ())
        for attr, pairs in sorted(lost(new, old).items()):
            names = sorted(c.qualname for c, _ in pairs)
            shown = ", ".join(names[:6]) + (f" (+{len(names) - 6} more)" if len(names) > 6 else "")
            top = pairs[0][0]
            old_v = pairs[0][1]
            guess = renames(attr, pairs)
            hint = (
                f"; likely renamed to {guess[0][0]} (same parameters, in {guess[0][1]} of them)"
                if guess
                else ""
            )
            none_fit = (
                ""
                if new.full
                else (
                    f" No class of {ctx.version_of(top.module)} defines all of "
                    f"{', '.join(ins.attrs)} now."
                )
            )
            f = ctx.finding(
                Severity.WARNING,
                Category.DRIFT,
                ins,
                f"{top.module}:{top.qualname}.{attr}",
                f"{ins.function}() (line {ins.function_line}) is installed as "
                f"{ins.obj}.{ins.replaces} and reads self.{attr} (line "
                f"{ins.attr_lines.get(attr)}); {len(names)} classes that defined every "
                f"attribute it reads in the baseline lack {attr} in {ctx.version_of(top.module)}: "
                f"{shown}{hint}.{none_fit}",
                f"Use {guess[0][0]} where {ins.function} reads self.{attr}"
                if guess
                else f"Find what replaced {attr} on those classes (`harness diff`).",
                Symbol(top.qualname, SymbolKind.CLASS, top.file, top.line, top.line),
                (
                    Change(
                        ChangeKind.ATTRIBUTE_REMOVED,
                        attr,
                        f"{old_v.file}:{old_v.line}",
                        guess[0][0] if guess else None,
                        text=f"{attr} gone from {len(names)} classes"
                        + (f", renamed to {guess[0][0]}" if guess else ""),
                        classes=tuple(names),
                    ),
                ),
                attribute=attr,
            )
            out.append(f)
    return out
