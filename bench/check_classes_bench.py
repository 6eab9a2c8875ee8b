"""Benchmark: issue 34's seven classes of break -- `harness check` beside mypy and pyright.

For each class, a pair (a caller against a callee release that breaks it) and its control (the
same caller against the release it was written for, where every error is a false one). All
three tools read the same sources: the caller and the callee unpacked from their wheels, nothing
else (a dependency neither names -- torch, pydantic -- is missing for all three alike). Classes
1-4, 6 (ms-swift 3.6.4 on vLLM 0.16.0: a guarded import and the later import of the same
``try`` it skips), 7 and one of 5 (mellea 0.3.2: ``type(x) is C``) are real releases from PyPI;
5 past an exit is the handwritten pair of ``tests/fixtures/fixpairs`` (built into real wheels),
since no released pair was found for it. (6 was the handwritten ``moveapp``; the real pair has
its shape -- ``except ImportError: pass``, the name used in a function body -- and more.)

A known break counts as found by a tool when it reports an error at one of the break's lines
that names its subject (the removed member, the key, the parameter...) and that it does not
also report there, in the same words, on the control; ``--detail`` prints what each said.

Usage: python bench/check_classes_bench.py [--detail]
       (mypy: the test extra; pyright: pip install pyright -- it fetches node's pyright from npm)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tool_errors import Errors, count, harness_errors, mypy_errors, pyright_errors, roots  # noqa: E402

from harness.cache import cache_root  # noqa: E402
from tests.support.fixpairs import FIXPAIRS, build_wheel  # noqa: E402


@dataclass(frozen=True)
class Pair:
    caller: str  # dist name
    package: str  # import name
    new: str  # pypi: spec of the breaking pair
    control: str  # the spec it was written for
    args: tuple[str, ...]  # harness check's options


@dataclass(frozen=True, eq=False)
class Break:
    klass: int
    words: str
    pair: Pair
    file: str
    lines: set[int]  # where a report of it may sit (a call's lines, a use and its import)
    subject: tuple[str, ...]  # a report of it names one of these


SPEC_TF = Pair(
    "speculators",
    "speculators",
    "speculators==0.3.0,transformers==5.17.0",
    "speculators==0.3.0,transformers==4.57.6",
    ("--against", "transformers", "--baseline", "transformers==4.57.6"),
)
NARROW = Pair(
    "narrowapp",
    "narrowapp",
    "narrowapp==0.1.0,narrowlib==2.0.0",
    "narrowapp==0.1.0,narrowlib==1.0.0",
    (),
)
MS_SWIFT = Pair(
    "ms-swift",
    "swift",
    "ms-swift==3.6.4,vllm==0.16.0",
    "ms-swift==3.6.4,vllm==0.8.5.post1",
    ("--against", "vllm", "--no-baseline"),
)
LF_VLLM = Pair(
    "llamafactory",
    "llamafactory",
    "llamafactory==0.9.3,vllm==0.11.0",
    "llamafactory==0.9.3,vllm==0.8.5.post1",
    ("--against", "vllm", "--no-baseline"),
)
MELLEA = Pair(
    "mellea",
    "mellea",
    "mellea==0.3.2,transformers==5.17.0",
    "mellea==0.3.2,transformers==4.57.6",
    ("--against", "transformers", "--baseline", "transformers==4.57.6"),
)
PAIRS = (SPEC_TF, MELLEA, NARROW, MS_SWIFT, LF_VLLM)
LEGACY = "speculators/convert/eagle/eagle3_legacy_model.py"
NARROWED, REMOVED = "narrowapp/uses.py", "set_reshard_after_backward"
ROLLOUT = "swift/llm/infer/rollout.py"
BREAKS = (
    Break(1, "base remakes its subclasses", SPEC_TF, "speculators/config.py", {160},
          ("dataclass", "__init_subclass__", "metaclass")),
    Break(2, "base method collides in the MRO", SPEC_TF, "speculators/config.py", {160},
          ("validate",)),
    Break(3, "positional argument slid", SPEC_TF, LEGACY, {106, 107, 108},
          ("position_ids", "unsqueeze_dim")),
    Break(4, "override no longer fits the callee's call", SPEC_TF, LEGACY, {342},
          ("tie_weights", "recompute_mapping")),
    Break(5, "removed member, narrowed by type(x) is C", MELLEA,
          "mellea/backends/kv_block_helpers.py", {37}, ("to_legacy_cache",)),
    Break(5, "removed member, narrowed past continue", NARROW, NARROWED, {18}, (REMOVED,)),
    Break(5, "removed member, narrowed past assert", NARROW, NARROWED, {25}, (REMOVED,)),
    Break(5, "removed member, narrowed by a helper", NARROW, NARROWED, {30}, (REMOVED,)),
    Break(6, "guarded import used unguarded", MS_SWIFT, ROLLOUT, {30, 155}, ("get_open_port",)),
    Break(6, "the try's next import skipped, used unguarded", MS_SWIFT, ROLLOUT, {31, 318},
          ("chunk_list",)),
    Break(7, "dict key forwarded by ** into a dataclass", LF_VLLM,
          "llamafactory/chat/vllm_engine.py", {80, 97}, ("disable_log_requests",)),
)  # fmt: skip


def said(b: Break, new: Errors, control: Errors) -> list[str]:
    """What a tool reported at the break's lines on the breaking pair, naming its subject, and
    not in the same words on the control (an error there on both is about something else)."""
    return [
        m for ln in sorted(b.lines) for m in new.get((b.file, ln), [])
        if m not in control.get((b.file, ln), []) and any(w in m for w in b.subject)
    ]  # fmt: skip


def prepared_cache(tmp: Path) -> Path:
    """A cache whose ``pypi/`` links every unpacked layout of the user's cache and whose
    ``wheels/`` holds the handwritten pairs as wheels: nothing is unpacked twice."""
    here = tmp / "cache"
    (here / "pypi").mkdir(parents=True)
    (here / "wheels").mkdir()
    src = cache_root() / "pypi"
    for d in sorted(src.iterdir()) if src.is_dir() else []:
        if d.is_dir():
            (here / "pypi" / d.name).symlink_to(d.resolve(), target_is_directory=True)
    for folder in sorted(FIXPAIRS.iterdir()):
        if folder.is_dir():
            build_wheel(folder, here / "wheels")
    return here


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--detail", action="store_true", help="what each tool said at each break")
    opts = ap.parse_args()
    for p in PAIRS:  # real wheels: fetched into the user's cache once, outside the timing
        if not p.caller.endswith("app"):
            roots(p.new), roots(p.control)
    tools = ("harness check", "mypy", "pyright")
    load0 = f"{os.getloadavg()[0]:.2f}"
    found: dict[str, dict[Pair, tuple[Errors, Errors]]] = {t: {} for t in tools}
    secs: dict[str, float] = dict.fromkeys(tools, 0.0)
    missing: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="harness-classes-bench-") as tmpdir:
        tmp = Path(tmpdir)
        cache = prepared_cache(tmp)
        os.environ["HARNESS_CACHE"] = str(cache)
        env = {**os.environ, "HARNESS_HOSTS": str(tmp / "hosts.toml"), "HARNESS_SSH_PERSIST": "0"}
        (tmp / "hosts.toml").write_text("")
        for p in PAIRS:
            got: dict[str, list[tuple[float, Errors]]] = {t: [] for t in tools}
            for spec in (p.new, p.control):
                paths = roots(spec)
                got["harness check"].append(
                    harness_errors(p.caller, f"pypi:{spec}", p.args, env, tmp)
                )
                for name, fn in (("mypy", mypy_errors), ("pyright", pyright_errors)):
                    r = fn(p.package, paths, tmp)
                    if r is None:
                        missing.add(name)
                    else:
                        got[name].append(r)
            for t in tools:
                if len(got[t]) == 2:
                    found[t][p] = (got[t][0][1], got[t][1][1])
                    secs[t] += got[t][0][0] + got[t][1][0]
    shown = [t for t in tools if t not in missing]
    print(f"load average before/after: {load0} / {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    print("issue 34's classes: the break found (an error at its lines) / errors on the control")
    print(f"{'class':58} " + " ".join(f"{t:>15}" for t in shown))
    for b in BREAKS:
        cells = ["yes" if said(b, *found[t][b.pair]) else "-" for t in shown]
        print(f"{b.klass} {b.words:56} " + " ".join(f"{c:>15}" for c in cells))
    print(f"{'recall':58} " + " ".join(
        f"{sum(1 for b in BREAKS if said(b, *found[t][b.pair])):>12}/{len(BREAKS):<2}"
        for t in shown
    ))  # fmt: skip
    for p in PAIRS:
        who = f"errors on the control {p.control}"
        print(f"{who:58} " + " ".join(f"{count(found[t][p][1]):>15}" for t in shown))
    print(f"{'wall s, all pairs and controls':58} " + " ".join(f"{secs[t]:>15.1f}" for t in shown))
    for name in sorted(missing):
        print(f"{name}: not installed or did not run")
    if opts.detail:
        for b in BREAKS:
            print(f"\n{b.klass} {b.words}: {b.file}:{','.join(map(str, sorted(b.lines)))}")
            for t in shown:
                for m in said(b, *found[t][b.pair])[:3]:
                    print(f"  {t}: {m[:150]}")


if __name__ == "__main__":
    main()
