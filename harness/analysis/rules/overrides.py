"""Caller subclasses whose overrides can no longer take what the callee calls them with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.analysis.findings import ERROR, WARNING
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
)

if TYPE_CHECKING:
    from harness.analysis.check import Checker

Json = dict[str, Any]


def run(ck: Checker) -> None:
    for sub in ck.scan.get("subclasses") or []:
        for meth in sub.get("methods") or []:
            for base in sub["bases"]:
                key = f"{base[1]}:{base[2]}.{meth['name']}"
                bsym = ck._sym(key)
                dunder = meth["name"].startswith("__") and meth["name"] != "__call__"
                if bsym is None or dunder:
                    continue
                problems = override_problems(bsym, meth)
                issues = [text for text, _ in problems]
                certain = any(sure for _, sure in problems)
                old = ck.base_sym(key)
                if issues:
                    use = {**sub, "line": meth["line"], "source": sub.get("source", "")}
                    # incompatible already in the version the caller was written for: a
                    # deliberate re-signature the caller keeps the base from calling
                    was = old is not None and bool(override_issues(old, meth))
                    ver = f"{old.get('dist')} {old.get('version')}" if old else ""
                    ck._add(
                        ERROR if certain and not was else WARNING,
                        "override-incompatible",
                        use,
                        key,
                        f"{sub['class']}.{meth['name']} "
                        f"{'does not accept' if was else 'no longer accepts'} what "
                        f"{bsym['qualname']} is called with: {'; '.join(issues)}"
                        + (
                            f" (already so in {ver}, the version it was written for)" if was else ""
                        ),
                        f"Match the override's parameters to {bsym['qualname']}'s.",
                        bsym,
                    )
                break


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
