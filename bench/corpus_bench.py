"""Benchmark: `harness check` on issue 46's corpus of real breaks, beside mypy and pyright.

Every pair of ``bench/corpus/pairs/`` (a caller release against a callee release that breaks it,
each break confirmed by running it) and its control (the callee release the same files work on)
is checked by the three tools, reading the same sources: the caller and the callee (and the
pair's ``extra``) unpacked from their wheels. harness runs as a user runs it: ``harness check
CALLER -t pypi:... --against CALLEE``, no ``--baseline``, over the whole package; mypy and
pyright over the pair's files (the imports they reach read too), which is where all three are
scored.

Scoring, per tool, only over the files the pair lists (its key is complete for them):
- a break is **found** when the tool reports an error at one of its lines that names one of its
  subjects and that it does not also report there, in the same words, on the control;
- every other error in those files on the breaking pair is a **false error**; on the control,
  every error is. For mypy and pyright, whose raw counts drown in what they say of any code, the
  count of errors not also reported (same place, same words) on the control is given beside it.

The halves are reported apart: ``built`` (the pairs rules were first written from), ``held_out``
(round 1's test half: read when stop 40 scored it, so rules may learn from it since) and
``round2`` (round 2, ``round = 2``: the test half of stop 47, read when it was scored, so rules may
learn from it since) and ``fresh`` (the newest round, ``round = 3``: mined after those rules,
unread by whoever writes one until the end). ``--half learn`` runs what a rule may be written from
(every half but ``fresh``).

Usage: python bench/corpus_bench.py [--half built|held_out|round2|fresh|learn|all] [--pair SUBSTR]
       [--no-mypy] [--no-pyright] [--detail] [--write bench/results/corpus.txt]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "bench" / "corpus" / "pairs"
#: venvs for pairs whose caller has no wheel (made once; pip's cache keeps the downloads)
VENVS = Path(os.environ.get("HARNESS_CORPUS_VENVS", Path.home() / ".cache" / "harness-corpus"))
sys.path.insert(0, str(REPO))

from tool_errors import (  # noqa: E402
    Errors,
    harness_errors,
    mypy_errors,
    pyright_errors,
    roots,
    site_packages,
    venv_for,
)

TOOLS = ("harness check", "mypy", "pyright")


@dataclass(frozen=True)
class Break:
    id: str
    file: str
    lines: frozenset[int]
    subject: tuple[str, ...]
    kind: str


@dataclass(frozen=True)
class Pair:
    name: str
    caller: str
    caller_version: str
    package: str
    callee: str
    new: str
    control: str
    held_out: bool
    round: int
    files: frozenset[str]
    extra: tuple[str, ...]
    breaks: tuple[Break, ...]
    standing: tuple[Break, ...] = ()  # bugs of the caller on both releases: true, no break

    def spec(self, callee_version: str) -> str:
        pins = [f"{self.caller}=={self.caller_version}", f"{self.callee}=={callee_version}"]
        return ",".join([*pins, *self.extra])

    @property
    def half(self) -> str:
        """built; held_out (round 1), round2: read once scored, rules may learn; fresh: unread."""
        if not self.held_out:
            return "built"
        return {1: "held_out", 2: "round2"}.get(self.round, "fresh")


HALVES = ("built", "held_out", "round2", "fresh")


def load_pair(folder: Path) -> Pair:
    """pair.toml parsed once, at the edge; a malformed record names its file."""
    path = folder / "pair.toml"
    try:
        d = tomllib.loads(path.read_text())
        breaks, standing = (
            tuple(
                Break(
                    str(b["id"]),
                    str(b["file"]),
                    frozenset(int(x) for x in b["lines"]),
                    tuple(str(s) for s in b["subject"]),
                    str(b.get("kind", table)),
                )
                for b in d.get(table, [])
            )
            for table in ("breaks", "standing")
        )
        return Pair(
            folder.name,
            str(d["caller"]),
            str(d["caller_version"]),
            str(d.get("package", d["caller"])),
            str(d["callee"]),
            str(d["new"]),
            str(d["control"]),
            bool(d["held_out"]),
            int(d.get("round", 1)),
            frozenset(str(f) for f in d["files"]),
            tuple(str(e) for e in d.get("extra", [])),
            breaks,
            standing,
        )
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{path}: not a corpus record ({type(e).__name__}: {e})") from None


def in_files(errs: Errors, files: frozenset[str]) -> Errors:
    return {w: m for w, m in errs.items() if w[0] in files}


def said(b: Break, new: Errors, control: Errors) -> list[str]:
    """What a tool reported at the break's lines on the breaking pair, naming its subject, and
    not in the same words on the control (an error there on both is about something else)."""
    low = tuple(s.lower() for s in b.subject)
    return [
        m for ln in sorted(b.lines) for m in new.get((b.file, ln), [])
        if m not in control.get((b.file, ln), []) and any(s in m.lower() for s in low)
    ]  # fmt: skip


@dataclass
class Score:
    found: set[str] = field(default_factory=set)  # break ids
    false_new: int = 0  # errors on the breaking pair that are no break of the key
    false_new_only: int = 0  # ... and not also reported (same place, words) on the control
    false_control: int = 0
    secs: float = 0.0
    detail: list[str] = field(default_factory=list)


def standing(p: Pair, errs: Errors) -> tuple[Errors, list[str]]:
    """``errs`` without the reports of the pair's standing bugs (true on both releases, so
    neither found nor false), and those reports."""
    kept: Errors = {}
    seen: list[str] = []
    for (f, ln), msgs in errs.items():
        for m in msgs:
            hit = [
                b.id
                for b in p.standing
                if b.file == f and ln in b.lines and said(b, {(f, ln): [m]}, {})
            ]
            if hit:
                seen.append(f"standing {hit[0]} {f}:{ln}: {m[:160]}")
            else:
                kept.setdefault((f, ln), []).append(m)
    return kept, seen


def score(p: Pair, new: Errors, control: Errors) -> Score:
    new, control = in_files(new, p.files), in_files(control, p.files)
    s = Score()
    new, s.detail = standing(p, new)
    control, _ = standing(p, control)
    true_msgs: set[tuple[str, int, str]] = set()
    for b in p.breaks:
        hits = said(b, new, control)
        if hits:
            s.found.add(b.id)
            s.detail.append(f"{b.id} {b.file}:{min(b.lines)}: {hits[0][:160]}")
            for ln in b.lines:
                true_msgs.update((b.file, ln, m) for m in hits)
    for (f, ln), msgs in new.items():
        for m in msgs:
            if (f, ln, m) in true_msgs:
                continue
            s.false_new += 1
            s.false_new_only += m not in control.get((f, ln), [])
            s.detail.append(f"false {f}:{ln}: {m[:160]}")
    s.false_control = sum(len(v) for v in control.values())
    return s


def run_pair(
    p: Pair, tools: tuple[str, ...], env: dict[str, str], tmp: Path
) -> dict[str, Score] | str:
    out: dict[str, Score] = {}
    specs = (p.spec(p.new), p.spec(p.control))
    targets: list[str] = []
    paths: list[list[str]] = []
    for spec in specs:
        try:
            paths.append(roots(spec))
            targets.append(f"pypi:{spec}")
        except Exception:  # no wheel (an sdist-only caller): an environment, as a user has
            try:
                venv = venv_for(spec, VENVS)
            except (OSError, subprocess.CalledProcessError) as e:
                return f"skipped: {spec} cannot be installed ({type(e).__name__})"
            paths.append([str(site_packages(venv))])
            targets.append(f"venv:{venv}")
    for tool in tools:
        got: list[tuple[float, Errors]] = []
        for target, ps in zip(targets, paths, strict=True):
            if tool == "harness check":
                args = ("--against", p.callee)
                got.append(harness_errors(p.caller, target, args, env, tmp))
            else:
                fn = mypy_errors if tool == "mypy" else pyright_errors
                r = fn(p.package, ps, tmp, tuple(sorted(p.files)))
                if r is None:
                    break
                got.append(r)
        if len(got) == 2:
            out[tool] = score(p, got[0][1], got[1][1])
            out[tool].secs = got[0][0] + got[1][0]
    return out


def report(pairs: list[Pair], results: dict[str, dict[str, Score] | str], detail: bool) -> str:
    tools = [t for t in TOOLS if any(isinstance(r, dict) and t in r for r in results.values())]
    lines: list[str] = []
    head = f"{'pair':58} {'half':8} {'brk':>3} " + " ".join(f"{t[:13]:>22}" for t in tools)
    for half in HALVES:
        chosen = [p for p in pairs if p.half == half]
        if not chosen:
            continue
        lines += ["", f"== {half} half: {len(chosen)} pairs "
                  "(cells: found/breaks, false errors on the pair [not on control], "
                  "on the control, wall s)", head]  # fmt: skip
        total: dict[str, Score] = {t: Score() for t in tools}
        nbreaks = 0
        kinds: Counter[str] = Counter()
        kind_found: dict[str, Counter[str]] = {t: Counter() for t in tools}
        for p in chosen:
            r = results[p.name]
            if isinstance(r, str):
                lines.append(f"{p.name[:58]:58} {half:8} {len(p.breaks):>3} {r}")
                continue
            nbreaks += len(p.breaks)
            kinds.update(b.kind for b in p.breaks)
            cells = []
            for t in tools:
                s = r.get(t)
                if s is None:
                    cells.append(f"{'-':>22}")
                    continue
                agg = total[t]
                agg.found |= {f"{p.name}/{i}" for i in s.found}
                agg.false_new += s.false_new
                agg.false_new_only += s.false_new_only
                agg.false_control += s.false_control
                agg.secs += s.secs
                kind_found[t].update(b.kind for b in p.breaks if b.id in s.found)
                cell = f"{len(s.found)}/{len(p.breaks)} {s.false_new}[{s.false_new_only}] "
                cells.append(f"{cell}{s.false_control} {s.secs:.1f}".rjust(22))
            lines.append(f"{p.name[:58]:58} {half:8} {len(p.breaks):>3} " + " ".join(cells))
        lines.append(
            f"{'TOTAL ' + half:58} {'':8} {nbreaks:>3} "
            + " ".join(
                (
                    f"{len(total[t].found)}/{nbreaks} {total[t].false_new}"
                    f"[{total[t].false_new_only}] {total[t].false_control} {total[t].secs:.0f}"
                ).rjust(22)
                for t in tools
            )
        )
        pct = " ".join(f"{100 * len(total[t].found) / max(nbreaks, 1):>21.0f}%" for t in tools)
        lines.append(f"{'recall ' + half:58} {'':8} {'':>3} {pct}")
        lines.append(f"per kind ({half}): kind, breaks, found by " + ", ".join(tools))
        for k, n in sorted(kinds.items()):
            lines.append(f"  {k:24} {n:>3} " + " ".join(f"{kind_found[t][k]:>6}" for t in tools))
    if detail:
        for p in pairs:
            r = results[p.name]
            if isinstance(r, dict):
                lines.append(f"\n{p.name} ({p.half})")
                for t, s in r.items():
                    lines += [f"  {t}: {d}" for d in s.detail[:40]]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--half",
        choices=(*HALVES, "learn", "all"),
        default="all",
        help="learn = every half but fresh (what a rule may be written from); fresh stays unread",
    )
    ap.add_argument("--pair", default="", help="only pairs whose folder name holds this")
    ap.add_argument("--no-mypy", action="store_true")
    ap.add_argument("--no-pyright", action="store_true")
    ap.add_argument("--detail", action="store_true", help="each tool's hits and false errors")
    ap.add_argument("--write", type=Path, help="also write the report to this file")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the pairs' folder")
    opts = ap.parse_args()
    pairs = [load_pair(d) for d in sorted(opts.corpus.iterdir()) if (d / "pair.toml").is_file()]
    wanted_halves = {"all": HALVES, "learn": ("built", "held_out", "round2")}.get(
        opts.half, (opts.half,)
    )
    pairs = [p for p in pairs if p.half in wanted_halves and opts.pair in p.name]
    if not pairs:
        wanted = f"--half {opts.half}, --pair {opts.pair!r}"
        raise SystemExit(f"{opts.corpus}: no pair matches ({wanted})")
    tools = tuple(
        t for t in TOOLS
        if not (t == "mypy" and opts.no_mypy) and not (t == "pyright" and opts.no_pyright)
    )  # fmt: skip
    load0 = os.getloadavg()[0]
    results: dict[str, dict[str, Score] | str] = {}
    with tempfile.TemporaryDirectory(prefix="harness-corpus-bench-") as tmpdir:
        tmp = Path(tmpdir)
        (tmp / "hosts.toml").write_text("")
        env = {**os.environ, "HARNESS_HOSTS": str(tmp / "hosts.toml"), "HARNESS_SSH_PERSIST": "0"}
        for p in pairs:
            print(f"... {p.name}", file=sys.stderr, flush=True)
            results[p.name] = run_pair(p, tools, env, tmp)
    text = (
        f"corpus: {len(pairs)} pairs, {sum(len(p.breaks) for p in pairs)} confirmed breaks; "
        f"load average before/after: {load0:.2f} / {os.getloadavg()[0]:.2f} "
        f"({os.cpu_count()} CPUs)" + report(pairs, results, opts.detail)
    )
    print(text)
    if opts.write:
        opts.write.write_text(text + "\n")


if __name__ == "__main__":
    main()
