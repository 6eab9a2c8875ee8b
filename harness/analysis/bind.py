"""Bind a call's argument shape to a signature the way CPython does -- pure, table-tested.

Only what is certain from the source is reported: a ``*args`` in the call makes the positional
count unknowable, a ``**kwargs`` makes unknown keywords and missing parameters unknowable.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.findings import Category
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
)


@dataclass(frozen=True)
class CallShape:
    """What the call site passes, as far as the source says."""

    positional: int
    keywords: tuple[str, ...] = ()
    star: bool = False  # f(*xs)
    double_star: bool = False  # f(**kw)


@dataclass(frozen=True)
class BindProblem:
    category: Category  # too-many-positional | unexpected-kwarg | missing-required-arg | ...
    detail: str  # the TypeError CPython would raise, in its words
    names: tuple[str, ...] = ()


def bind(
    shape: CallShape, params: tuple[Parameter, ...], *, ignore_unknown_kwargs: bool = False
) -> list[BindProblem]:
    """Problems binding ``shape`` to ``params`` (self/cls already removed). Empty: it binds."""
    problems: list[BindProblem] = []
    positional = [p for p in params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    has_var_pos = any(p.kind == VAR_POSITIONAL for p in params)
    has_var_kw = any(p.kind == VAR_KEYWORD for p in params)
    by_name = {p.name: p for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}

    if not shape.star and not has_var_pos and shape.positional > len(positional):
        problems.append(
            BindProblem(
                Category.TOO_MANY_POSITIONAL,
                f"takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''}"
                f" but {shape.positional} were given",
            )
        )
    bound = {p.name for p in positional[: shape.positional]}

    unexpected: list[str] = []
    for kw in shape.keywords:
        p = by_name.get(kw)
        if p is None:
            if has_var_kw or ignore_unknown_kwargs:
                continue
            posonly = any(q.name == kw and q.kind == POSITIONAL_ONLY for q in params)
            if posonly:
                bound.add(kw)  # CPython stops here; "missing" would repeat the same mistake
                problems.append(
                    BindProblem(
                        Category.POSITIONAL_ONLY_AS_KEYWORD,
                        f"got some positional-only arguments passed as keyword arguments: '{kw}'",
                        (kw,),
                    )
                )
            else:
                unexpected.append(kw)
            continue
        if kw in bound:
            problems.append(
                BindProblem(
                    Category.DUPLICATE_ARGUMENT, f"got multiple values for argument '{kw}'", (kw,)
                )
            )
        bound.add(kw)
    for kw in unexpected:
        problems.append(
            BindProblem(
                Category.UNEXPECTED_KWARG, f"got an unexpected keyword argument '{kw}'", (kw,)
            )
        )

    if not shape.double_star:
        missing = [
            p.name
            for p in params
            if p.required and p.name not in bound and not (shape.star and p.kind != KEYWORD_ONLY)
        ]
        if missing:
            names = (
                " and ".join(f"'{m}'" for m in missing)
                if len(missing) <= 2
                else (", ".join(f"'{m}'" for m in missing[:-1]) + f", and '{missing[-1]}'")
            )
            problems.append(
                BindProblem(
                    Category.MISSING_REQUIRED_ARG,
                    f"missing {len(missing)} required argument{'s' if len(missing) > 1 else ''}: "
                    f"{names}",
                    tuple(missing),
                )
            )
    return problems


def bind_any(
    shape: CallShape, variants: list[tuple[Parameter, ...]], *, ignore_unknown_kwargs: bool = False
) -> list[BindProblem]:
    """``@overload``: fine if any variant binds; else the problems of the closest one."""
    best: list[BindProblem] | None = None
    for params in variants:
        got = bind(shape, params, ignore_unknown_kwargs=ignore_unknown_kwargs)
        if not got:
            return []
        if best is None or len(got) < len(best):
            best = got
    return best or []
