#!/usr/bin/env python3
"""The port to a new vLLM, as a user meets it: static check, then smoke runs, before any full run.

Run on the GPU machine after ``bash bench/gpu/stage.sh --install`` of a payload built with
``bash bench/gpu/pack.sh 0.26.0``:

    python3 bench/gpu/port_bench.py [--without PATCH_ID ...]

Builds e2e.py's tiny Llama and chat data, then, with harness's own commands on ``-t local``:
``check`` (unpatched and ``--with-patches``); ``apply-patches`` of the series minus the patches
named by ``--without`` (the series as it stood before a break was fixed), ``run prepare``,
``run extract --smoke`` (what a user runs before a full load: does it break, and which line says
why); then ``revert-patches``, ``apply-patches`` of the whole series and ``run extract --smoke``
again, which must end succeeded and verified. Each result is a line in ``$OUT/results.txt``; the
failure summary harness printed is kept in the logs archive.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import e2e  # the model, data and command runner the end-to-end uses
from e2e import LOGS, PIPE, REPO, WORK, harness, keep_log, last_run, say, sets


def tally(out: str) -> str:
    """check's last line: "N error(s), M warning(s) ..."."""
    return (re.findall(r"^\d+ error.*$", out, re.M) or ["no tally line"])[-1]


def series_without(ids: list[str]) -> Path:
    """A copy of patches/ whose speculators series lacks the patches ``ids`` name."""
    dest = WORK / "patches-without"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(REPO / "patches", dest)
    folder = dest / "speculators" / "0.3.0"
    text = (folder / "series.toml").read_text()
    for pid in ids:
        start = text.index(f'[[patch]]\nfile = "{pid}')
        end = text.find("[[patch]]", start + 1)
        text = text[:start] + (text[end:] if end != -1 else "")
        for f in folder.glob(f"{pid}*.patch"):
            f.unlink()
    (folder / "series.toml").write_text(text)
    return dest


def smoke(tag: str, patches: Path) -> bool:
    """``run extract --smoke``: its exit, state and verification, and the failure summary."""
    pipe = [*PIPE[:2], "--patches", str(patches)]
    r = harness("run", "extract", "--smoke", *sets(), *pipe, name=f"run extract --smoke ({tag})")
    keep_log("extract", f"smoke-{tag}")
    (LOGS / f"smoke-{tag}-summary.txt").write_text(r.out + "\n--- stderr\n" + r.err)
    info = last_run("extract") or {}
    say(f"  state: {info.get('state')}: {info.get('label')}")
    if r.code != 0:
        for line in r.err.strip().splitlines()[-10:]:
            say(f"  | {line}")
    return r.code == 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--without", nargs="*", default=["0014"], help="patch ids left out of the first smoke run"
    )
    args = ap.parse_args()
    e2e.fresh_dirs()
    import importlib.metadata as md

    say(
        f"port bench: vllm {md.version('vllm')}, torch {md.version('torch')}, transformers {md.version('transformers')}"
    )
    e2e.build_model()
    say("built e2e's tiny Llama and chat data")

    harness("revert-patches", *PIPE[2:], name="revert-patches (start pristine)", quiet=True)
    r = harness("check", "speculators", "--against", "vllm", *PIPE[2:], name="check (unpatched)")
    say(f"  {tally(r.out)}")
    r = harness(*e2e.CHECK_PATCHED, *PIPE[2:], name="check --with-patches")
    say(f"  {tally(r.out)}")

    without = series_without(args.without) if args.without else REPO / "patches"
    r = harness(
        "apply-patches",
        "--patches",
        str(without),
        name=f"apply-patches (series without {' '.join(args.without)})",
    )
    say(f"  {r.out.strip().splitlines()[-1] if r.out.strip() else r.err.strip()[-200:]}")
    r = harness("run", "prepare", *sets(), *PIPE[:2], "--patches", str(without), name="run prepare")
    keep_log("prepare", "prepare")
    if r.code != 0:
        say("  prepare failed: the smoke runs need its data")
        e2e.pack()
        return 1
    first = smoke("without " + "+".join(args.without), without) if args.without else True

    harness("revert-patches", "--patches", str(without), name="revert-patches", quiet=True)
    r = harness("apply-patches", *PIPE[2:], name="apply-patches (whole series)")
    say(f"  {r.out.strip().splitlines()[-1] if r.out.strip() else r.err.strip()[-200:]}")
    second = smoke("whole series", REPO / "patches")
    say(
        f"port bench done: smoke without {args.without}: {'passed' if first else 'failed'}; with the series: {'passed' if second else 'failed'}"
    )
    e2e.pack()
    return 0 if second else 1


if __name__ == "__main__":
    sys.exit(main())
