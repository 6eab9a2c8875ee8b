"""Check extracted hidden states (speculators 0.3.0's ``data_{i}.pt`` or 0.9.0's
``hs_{i}.safetensors``) on the target's GPU, every sample by default.

Run by the supervisor after ``extract`` exits 0 (``verify`` in pipeline.toml), with the step's
environment; writes one ``HARNESS_VERIFY {json}`` report -- to the fd ``HARNESS_VERIFY_FD``
names when the supervisor runs it (its own channel: nothing else the step left running can
write there), on stdout otherwise -- and exits 0 (every check passed) or 1 (some sample
failed one, each named with its words). The report (``_hs_report.py``) keeps a count per check
-- they reach differently:

* ``layers`` (every file): it holds exactly one state per distinct configured layer id, no
  two of them bit-identical ("holds 3 layers, configured 4 ([2, 4, 5, 7])", "layer 5's
  states equal layer 4's (duplicated)");
* ``lengths`` (every file): one row of states per token id; a missing or unreadable file;
* ``ids`` (every file, with ``--prepared PATH``, the prepare step's ``save_to_disk`` folder):
  the file's token ids are the prepared dataset's for that sample index -- a sample written
  under another sample's name passes a forward pass on its own ids;
* ``values`` (every file by default, ``--samples N``: N spread evenly, first and last
  included): compared with a reference at the compared layers (``--layers lowest``: the
  lowest captured one, which loads the fewest decoder layers; ``all``; or a list). Per layer,
  in order (``_hs_judge.py``): NaN/inf, all-zero rows, position identity (each row nearest its
  own reference row), layer identity (nearest its own reference layer, when the neighbouring
  layers are at hand), then the relative Frobenius error: <= ``--tolerance`` (0.05) passes;
  up to ``--hard-tolerance`` (0.25) with both identities holding passes as *drift* (listed
  as a warning); above it fails.

The reference (``_hs_ref.py``): a transformers forward pass of the same model cut after the
last block needed, right-padded batches of similar lengths (``--batch-tokens``), while a
background thread loads the next files (``_hs_read.py``; never the whole dataset in memory).
``--capture`` says what a layer id means (``output`` of block k: speculators 0.3.0; ``input``
of layer k: vLLM's aux hidden states). ``--alone`` (a smoke run: random weights) compares with
the same samples extracted again one at a time instead. ``--structure`` (the served
pipeline's smoke run: random weights behind a server, no second engine to ask) checks every
file's ids, layers and lengths, its width against the model's ``hidden_size``, and that every
value is finite -- nothing compared against a reference.

Started with the step (the supervisor sees ``HARNESS_VERIFY_GATE`` named here): the imports
and the reference's model code load while the step runs (:func:`warm`), then the check waits
at its gate (``_gate.py``) for the step's end -- its start-up no longer follows the step.

Why 0.05 and 0.25: bf16 keeps 8 significant bits; vLLM and transformers use different kernels
and summation orders, so the error grows with depth -- 0.9% over 8 layers of a dense Llama,
0.028-0.033 over a 24-layer DeepSeek-V3 shape, 0.048 at layer 7 of a Kimi-K2.5 shape. A
sample holding other tokens' states is off by ~1.0 (sqrt(2) for unrelated states of equal
norm) and is nearest to another row or layer, which the identity tests name.
"""

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from _gate import wait_for_go
from _hs_early import SETTLE, Early
from _hs_floor import (
    FLIP_MAX,
    FLIP_RATE,
    ROW_FACTOR,
    RUN_MAX,
    SAMPLE_FACTOR,
    Rule,
    drift,
    row_errors,
    rule_words,
)
from _hs_floor import judge as judge_rows
from _hs_judge import (
    HARD,
    TOLERANCE,
    Finding,
    LayerVerdict,
    duplicated,
    ids_match,
    judge_layer,
    layers_held,
    plan_batches,
    rows_match,
    spread,
)
from _hs_read import Folder, Prepared, Sample, Since, stream
from _hs_ref import (  # noqa: F401 - text_view.py and the tests read them here
    Alone,
    Reference,
    decoder_layers,
    model_depth,
    reference_model,
    valid_ids,
)
from _hs_ref import (
    checkpoint_files as checkpoint_files,
)
from _hs_report import Tally, emit
from _hs_stats import judge as judge_stats
from _hs_stats import profile

MARK = "HARNESS_VERIFY "
#: samples (spread evenly) compared at every captured layer: a forward to the highest layer
FULL = 16


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the folder of data_{i}.pt / hs_{i}.safetensors")
    ap.add_argument("--model", required=True)
    ap.add_argument("--samples", type=int, default=0, help="files whose values are compared "
                    "(0 = every one; N: N spread evenly, first and last included)")  # fmt: skip
    ap.add_argument("--layers", default="lowest", help="lowest | all | comma-separated ids")
    ap.add_argument("--full-samples", type=int, default=FULL, help="samples, spread evenly, "
                    "whose values are compared at every captured layer (0: none)")  # fmt: skip
    ap.add_argument("--row-factor", type=float, default=ROW_FACTOR)
    ap.add_argument("--sample-factor", type=float, default=SAMPLE_FACTOR)
    ap.add_argument("--flip-max", type=float, default=FLIP_MAX, help="MoE: a routing flip's size")
    ap.add_argument("--flip-rate", type=float, default=FLIP_RATE,
                    help="MoE: flip events per compared row of a layer")  # fmt: skip
    ap.add_argument("--flip-run", type=int, default=RUN_MAX,
                    help="MoE: the most adjacent rows one flip event moves")  # fmt: skip
    ap.add_argument("--census", help="bench: write each layer's rows above its bound "
                    "(_hs_census.py) as JSON to this file")  # fmt: skip
    ap.add_argument("--layer-ids", help="the captured layer ids (needed for hs_*.safetensors)")
    ap.add_argument(
        "--capture",
        default="output",
        choices=("output", "input"),
        help="layer id k: block k's output (0.3.0) or the stream entering it (vLLM)",
    )
    ap.add_argument("--prepared", help="the prepared dataset (save_to_disk): ids checked")
    ap.add_argument("--tolerance", type=float, default=TOLERANCE)
    ap.add_argument("--hard-tolerance", type=float, default=HARD)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16", help="the reference's dtype")
    ap.add_argument(
        "--batch-tokens",
        type=int,
        default=16384,
        help="padded tokens per reference forward (0 = one sample at a time)",
    )
    ap.add_argument("--window", type=int, default=32, help="samples sorted by length per plan")
    ap.add_argument("--prefetch", type=int, default=4, help="files loaded ahead")
    ap.add_argument("--alone", action="store_true", help="smoke: batch vs one at a time")
    ap.add_argument("--structure", action="store_true", help="smoke of a served model (random "
                    "weights, no reference): ids, shapes, layer count, finite values")  # fmt: skip
    ap.add_argument("--settle", type=float, default=SETTLE, help="seconds since a file's last "
                    "write before its statistics are read while the step runs")  # fmt: skip
    ap.add_argument("--max-samples", type=int, default=0,
                    help="the samples the step was asked for (0: every prepared one)")  # fmt: skip
    ap.add_argument("--seq-length", type=int, default=2048)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.8)
    return ap.parse_args()


def compared_layers(spec: str, configured: list[int]) -> list[int]:
    layers = {"lowest": [min(configured)], "all": list(configured)}.get(spec)
    if layers is None:
        layers = [int(x) for x in spec.split(",")]
    missing = sorted(set(layers) - set(configured))
    if missing:
        raise SystemExit(f"--layers {spec}: {missing} not captured (captured: {configured})")
    return sorted(set(layers))


def shape(tally: Tally, s: Sample, configured: list[int]) -> bool:
    """The checks every file gets (layers, lengths, ids); whether its values can be compared."""
    if s.error is not None:
        tally.compare("lengths", s.name, Finding("lengths", s.error))
        return False
    held = layers_held(s.held, configured)
    tally.compare("layers", s.name, held or duplicated(s.dup, configured))
    fits = tally.compare("lengths", s.name, rows_match(int(s.ids.shape[0]), s.rows))
    if s.prepared is not False:
        tally.compare("ids", s.name, ids_match(s.ids.tolist(), s.prepared, s.index))
    return fits and held is None


def compare(
    tally: Tally,
    ref: Alone | Reference,
    batch: list[Any],
    layers: list[int],
    configured: list[int],
    args: argparse.Namespace,
    pop: dict[int, dict[str, Any]],
    upto: int | None,
) -> None:
    """One batch's values against the reference, sample by sample, layer by layer: the
    identity tests now, each layer's row errors kept for the population's rule."""
    for s, refs in zip(batch, ref.states(batch, upto), strict=True):
        verdicts = {}
        tally.fp8 += s.fp8
        at_hand = {j: r.float() for j, r in refs.items()}
        for k in layers:
            x = s.states[configured.index(k)].to(refs[k].device).float()
            if x.shape != refs[k].shape:
                why = f"{tuple(x.shape)} states against {tuple(refs[k].shape)} of the reference"
                verdicts[k] = LayerVerdict(None, Finding("lengths", why))
                break
            verdicts[k] = judge_layer(x, k, at_hand, args.tolerance, args.hard_tolerance)
            if verdicts[k].finding is not None:
                break
            rows = verdicts[k].rows
            pop.setdefault(k, {})[s.name] = rows if rows is not None else row_errors(x, at_hand[k])
        tally.values(s.name, verdicts)


def warm(args: argparse.Namespace) -> None:
    """What the check loads before its gate: its libraries and the reference model's code --
    no GPU, no data (the step may still be writing it). Best effort: the check loads them
    again after the gate anyway."""
    import transformers
    from transformers.models.auto import modeling_auto

    if args.prepared:
        import datasets  # noqa: F401 - the prepared dataset's reader
    with contextlib.suppress(Exception):
        cfg = transformers.AutoConfig.from_pretrained(args.model, trust_remote_code=True)
        text = getattr(cfg, "text_config", None) or cfg
        name = modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(text.model_type)
        if name:
            getattr(transformers, name)


def step_started() -> Since | None:
    """When the step started: the supervisor's mark (``HARNESS_STEP_STARTED_FILE``, stamped
    by the outputs' own file clock) or ``HARNESS_STEP_STARTED`` (seconds), if it said."""
    mark = os.environ.get("HARNESS_STEP_STARTED_FILE") or None
    at = None
    with contextlib.suppress(KeyError, ValueError):
        at = float(os.environ["HARNESS_STEP_STARTED"])
    return Since(at, mark) if at is not None or mark else None


def structure(args: argparse.Namespace, torch: object) -> int:
    """``--structure``: every file's shape checks, its width, finite values; no reference."""
    from _disk_budget import hidden_of

    folder = Folder(Path(args.data), args.layer_ids)
    configured = folder.layer_ids
    there = bool(args.prepared) and Path(args.prepared).exists()
    prepared = Prepared(args.prepared) if there else None
    total = max(folder.total, len(prepared) if prepared is not None else 0)
    total = min(total, args.max_samples) if args.max_samples > 0 else total
    tally = Tally(total)
    if prepared is None:
        tally.skipped["ids"] = f"nothing at {args.prepared}" if args.prepared else "no --prepared"
    try:
        width = hidden_of(args.model)
    except SystemExit:
        width = None  # the model's config is not on this host: the widths only agree
    for i in range(total):
        s = folder.load(i, list(range(len(configured))), torch)
        s.prepared = prepared.ids(i) if prepared is not None else False
        if not shape(tally, s, configured):
            continue
        finding = None
        for p, x in sorted(s.states.items()):
            width = int(x.shape[-1]) if width is None else width
            if int(x.shape[-1]) != width:
                why = f"{int(x.shape[-1])} values a state at layer {configured[p]}"
                finding = Finding("lengths", f"{why}, the model's hidden_size is {width}")
                break
            bad = (~torch.isfinite(x.float())).any(dim=-1).nonzero()  # type: ignore[attr-defined]
            if len(bad):
                finding = Finding("non-finite", f"NaN/inf at row {int(bad[0])} (layer "
                                  f"{configured[p]})")  # fmt: skip
                break
        tally.compare("values", s.name, finding)
    if total == 0:
        tally.fail("(none)", Finding("lengths", f"no hs_*.safetensors in {args.data}"))
    report = tally.report([], "all", args.tolerance, "structure only: random weights")
    report["checks"]["values"]["rule"] = "finite, no reference (random weights)"
    for f in report["failed"][:20]:
        print(f"wrong: {f['sample']}: {f['check']}: {f['why']}", flush=True)
    emit(report, MARK)
    return 1 if report["failed"] or total == 0 else 0


def main() -> int:
    args = arguments()
    import torch

    if args.structure:
        return structure(args, torch) if wait_for_go() else 0
    warm(args)
    early = Early(Path(args.data), torch, args.settle)  # files that land before the gate opens
    if not wait_for_go(early.step):  # the step failed or was stopped: nothing to check
        return 0
    start = time.monotonic()
    folder = Folder(Path(args.data), args.layer_ids)
    configured = folder.layer_ids
    layers = compared_layers(args.layers, configured)
    there = bool(args.prepared) and Path(args.prepared).exists()
    prepared = Prepared(args.prepared) if there else None
    total = max(folder.total, len(prepared) if prepared is not None else 0)
    tally = Tally(total)
    if prepared is None:  # said in the verdict: "ids: not checked (...)"
        tally.skipped["ids"] = f"nothing at {args.prepared}" if args.prepared else "no --prepared"
    if total == 0:
        tally.fail("(none)", Finding("lengths", f"no data_*.pt or hs_*.safetensors in {args.data}"))
        emit(tally.report(layers, "all", args.tolerance, "nothing to check"), MARK)
        return 1
    picks = set(spread(total, args.samples))
    chosen_by = "all" if len(picks) == total else "spread"
    full_ids = list(configured) if args.full_samples > 0 or args.layers == "all" else layers
    full = set(range(total)) if args.layers == "all" else set(spread(total, args.full_samples))
    full = full if args.full_samples > 0 or args.layers == "all" else set()

    def layers_of(i: int) -> list[int]:
        return full_ids if i in full else layers

    def load(i: int) -> Sample:
        s = folder.load(i, list(range(len(configured))), torch)
        if s.error is None and s.held == len(configured):
            s.stats = early.profile_of(folder.paths.get(i)) or profile(
                [s.states[p] for p in range(s.held)])  # fmt: skip
        keep = {configured.index(k) for k in layers_of(i)} if i in picks else set()
        # a copy of each layer kept: a view would keep the whole file's states in memory
        s.states = {p: x.contiguous() for p, x in s.states.items() if p in keep}
        s.prepared = prepared.ids(i) if prepared is not None else False
        return s

    if not args.alone:  # ids the model cannot have (a wrong --capture) are the lowest's to say
        ok = valid_ids(args.capture, model_depth(args.model))
        full_ids = [k for k in full_ids if k in ok or k in layers]
    ref: Alone | Reference
    if args.alone:
        ref = Alone(args, configured, torch)
    else:
        ref = Reference(args, sorted(set(layers) | set(full_ids)), bool(full), torch)
    pending: dict[bool, list[Sample]] = {True: [], False: []}
    pop: dict[int, dict[str, Any]] = {}
    stats: dict[str, list[Any]] = {}

    def flush(whole: bool) -> None:
        group = pending[whole]
        for part in plan_batches([len(s.ids) for s in group], args.batch_tokens):
            compare(tally, ref, [group[i] for i in part], layers_of(group[part[0]].index),
                    configured, args, pop, None if whole else max(layers))  # fmt: skip
        group.clear()

    for s in stream(load, range(total), args.prefetch):
        if s.stats:
            stats[s.name] = s.stats
        if shape(tally, s, configured) and s.index in picks:
            pending[s.index in full].append(s)
            if len(pending[s.index in full]) >= args.window:
                flush(s.index in full)
    flush(True)
    flush(False)
    rule = Rule(row_factor=args.row_factor, sample_factor=args.sample_factor,
                tol=args.tolerance, hard=args.hard_tolerance, moe=ref.moe,
                flip_max=args.flip_max, flip_rate=args.flip_rate,
                run_max=args.flip_run)  # fmt: skip
    floors, found = judge_rows(pop, rule)
    if args.census:
        import json

        from _hs_census import census

        Path(args.census).write_text(json.dumps(census(pop, floors), indent=1))
    failed = {f["sample"] for f in tally.failed}
    for name, finding in sorted(found.items()):
        if name not in failed:
            tally.fail(name, finding)
    for name, finding in sorted(judge_stats(stats, configured).items()):
        tally.fail(name, finding)
    every = sorted(set(layers) | set(full_ids))
    report = tally.report(every, chosen_by, args.tolerance, ref.what,
                          hard_tolerance=args.hard_tolerance, capture=args.capture,
                          seconds=round(time.monotonic() - start, 1))  # fmt: skip
    values = report["checks"]["values"]
    values["rule"] = rule_words(floors, rule)
    at_every = len(full & picks)
    if every != layers and at_every < values["compared"]:
        values["every_layer_on"] = at_every
    report["drift"] = drift(floors, rule)
    if early.kept:  # statistics read while the step ran, still those files after it
        report["early"] = {"files": early.reused, "seconds": round(early.seconds, 1)}
    kept = folder.kept(step_started())
    if kept is not None:
        report["kept"] = {"files": kept[0], "of": kept[1]}
    for f in report["failed"][:20]:
        print(f"wrong: {f['sample']}: {f['check']}: {f['why']}", flush=True)
    emit(report, MARK)
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
