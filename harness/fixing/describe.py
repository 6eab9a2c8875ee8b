"""The words a fix patch carries: its one-line ``why``, the header's detail, its ``requires``.

Pure, so the text a reviewer reads in series.toml is tested like the decisions are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from packaging.version import InvalidVersion, Version

from harness.fixing.model import ArgumentsEdit, Fix, ImportEdit, KeywordEdit, Manual


def short(fix: Fix) -> str:
    """``file.py:LINE what changed`` -- one fixed finding, named."""
    where = f"{PurePosixPath(fix.finding.file).name}:{fix.finding.line}"
    e = fix.edit
    if isinstance(e, ImportEdit):
        if e.new_name != e.name:
            return f"{where} {e.name} renamed {e.new_name} ({e.new_module})"
        return f"{where} import {e.name} from {e.new_module}"
    func = fix.finding.symbol.partition(":")[2] or fix.finding.symbol
    if isinstance(e, ArgumentsEdit):
        named = [n for n in e.names if n]
        gone = [k for k, n in zip(fix.finding.keywords, e.names, strict=False) if n is None]
        return f"{where} {func}()" + "".join(
            [f" naming {', '.join(named)}" if named else "", f" without {', '.join(gone)}"]
            if gone
            else [f" naming {', '.join(named)}"]
        )
    assert isinstance(e, KeywordEdit)
    if e.new is not None:
        return f"{where} {func}({e.keyword}= -> {e.new}=)"
    return f"{where} {func}() without {e.keyword}"


def why_line(fixes: Sequence[Fix], old: str, new: str) -> str:
    """series.toml's one line: each fixed finding, named, and the two versions. Names one
    statement's moves to one module together (``a.py:15 import x, y from m``)."""
    parts: list[str] = []
    moves: dict[tuple[str, int, str], list[str]] = {}
    for f in fixes:
        e = f.edit
        if isinstance(e, ImportEdit) and e.new_name == e.name:
            key = (PurePosixPath(f.finding.file).name, f.finding.line, e.new_module)
            if key not in moves:
                moves[key] = []
                parts.append("")  # its place in the order; filled below
            if e.name not in moves[key]:  # several uses of one guarded import: named once
                moves[key].append(e.name)
            continue
        if short(f) not in parts:
            parts.append(short(f))
    filled = iter(
        f"{w}:{n} import {', '.join(names)} from {m}" for (w, n, m), names in moves.items()
    )
    return f"check --fix, {old} -> {new}: " + "; ".join(p or next(filled) for p in parts)


def details(fixes: Sequence[Fix], manual: Sequence[Manual]) -> str:
    """The patch header: every fix with its proof, and what was left to a person."""
    lines = [f"* {f.finding.file}:{f.finding.line} {f.kind}: {f.summary}" for f in fixes]
    if manual:
        lines.append("Left to a person (see `harness check --with-patches`):")
        lines += [
            f"* {m.finding.file}:{m.finding.line} {m.finding.category} {m.finding.symbol}"
            for m in manual
        ]
    return "\n".join(lines) + "\n\n" if lines else ""


def minor_range(version: str) -> str | None:
    """``0.33.0`` -> ``>=0.33,<0.34``: the minor series the new API was read and checked in.

    Wider is a claim about versions nobody looked at; widen it (``--requires``) once
    ``check --with-patches`` has said the patch holds there too.
    """
    try:
        v = Version(version)
    except InvalidVersion:
        return None
    major, minor = (*v.release, 0)[:2]
    return f">={major}.{minor},<{major}.{minor + 1}"


def gates(fixes: Sequence[Fix], override: Mapping[str, str]) -> dict[str, str]:
    """``requires`` for the patch: each callee dist a fix relies on, at its minor series;
    ``override`` (from ``--requires``) wins per dist."""
    from packaging.utils import canonicalize_name

    out: dict[str, str] = {}
    for f in fixes:
        if f.dist and f.version:
            rng = minor_range(f.version)
            if rng:
                out[str(canonicalize_name(f.dist))] = rng
    out.update(override)
    return out


def same_dist(a: str, b: str) -> bool:
    """Pure: ``a`` and ``b`` name one distribution (``Foo_Bar`` is ``foo-bar``)."""
    from packaging.utils import canonicalize_name

    return canonicalize_name(a) == canonicalize_name(b)


def versions_label(versions: Mapping[str, str | None]) -> str:
    """Pure: ``{"vllm": "0.20.2"}`` -> ``"vllm 0.20.2"`` (what the patch's header says)."""
    return ", ".join(f"{d} {v}" for d, v in sorted(versions.items()))
