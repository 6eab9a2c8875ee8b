"""What reading statistics while the step runs saves (issue 42, item 6): the extraction check's
time from ``go`` (the step's end) to its report, with the files' statistics read at its gate
while the step ran, against the same check that reads nothing before ``go`` -- in the same run,
on 8B-shaped files (``bench/hs_cost.py make``: hidden 4096, 4 layers, ~830 tokens a sample).

    python bench/hs_early_bench.py OUT [--samples 64] [--python PY] [-- CHECK-ARGS...]

CHECK-ARGS go to both checks, e.g. ``--samples 2 --full-samples 0``: the CPU's reference forward
(~85 % of the check's CPU time at this shape, the GPU's to do fast) left nearly out, so the
figures show the per-file work (reading, statistics, identity tests) that ``go`` waits for.

Both checks start at a real gate (``HARNESS_VERIFY_GATE``, a pipe, as the supervisor makes it);
the early one gets ``go`` once it says it has read every file, the other (``--settle`` so large
that nothing is settled) as long after its start. CPU only: the reference forward here is the
tiny-blocked model's; the GPU's share is the 8B bench's (bench/gpu/scale8b.py).
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHECK = REPO / "probes" / "verifiers" / "hidden_states.py"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "0"}


def one(
    python: str, out: Path, settle: str, wait: float | None, n: int, extra: list[str]
) -> tuple[float, float, dict]:
    """(seconds before go, seconds from go to the report, the report)."""
    read, write = os.pipe()
    argv = [python, str(CHECK), "--data", str(out / "hs"), "--model", str(out / "model"),
            "--prepared", str(out / "prepared"), "--layer-ids", "1,2,3,4", "--capture", "input",
            "--device", "cpu", "--dtype", "float32", "--settle", settle, *extra]  # fmt: skip
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env={**ENV, "HARNESS_VERIFY_GATE": str(read)}, pass_fds=(read,),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=CHECK.parent)  # fmt: skip
    os.close(read)
    said = b""
    assert proc.stderr is not None
    if wait is None:
        while f"statistics of {n} files read".encode() not in said:
            if proc.poll() is not None:
                raise SystemExit(said.decode()[-2000:])
            if select.select([proc.stderr], [], [], 1.0)[0]:
                said += os.read(proc.stderr.fileno(), 65536)
    else:
        time.sleep(wait)
    before = time.monotonic() - t0
    go = time.monotonic()
    os.write(write, b"go\n")
    os.close(write)
    stdout, _ = proc.communicate()
    after = time.monotonic() - go
    line = [x for x in stdout.decode().splitlines() if x.startswith("HARNESS_VERIFY ")][-1]
    return before, after, json.loads(line.split(" ", 1)[1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--python", default=sys.executable)
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    opts = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if not (opts.out / "hs").is_dir():
        sys.path.insert(0, str(REPO / "bench"))
        subprocess.run([opts.python, str(REPO / "bench" / "hs_cost.py"), "make", str(opts.out),
                        "--samples", str(opts.samples)], check=True)  # fmt: skip
    ago = time.time() - 60  # the step wrote them: settled
    for f in (opts.out / "hs").iterdir():
        os.utime(f, (ago, ago))
    b1, a1, r1 = one(opts.python, opts.out, "2", None, opts.samples, extra)
    _, a0, r0 = one(opts.python, opts.out, "1e12", b1, opts.samples, extra)
    print(
        f"samples {opts.samples}, 8B-shaped (hidden 4096, 4 layers), check args {extra}; "
        f"this machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"  reads nothing before go : go -> report {a0:6.1f} s (verdict failed: {len(r0['failed'])})"
    )
    print(
        f"  statistics at the gate  : go -> report {a1:6.1f} s (verdict failed: {len(r1['failed'])}); "
        f"{r1.get('early', {}).get('files')} files' statistics read in {b1:.1f} s before go"
    )
    print(f"  ratio: {a0 / max(a1, 1e-9):.2f}x less time after the step ends")
    return 0


if __name__ == "__main__":
    sys.exit(main())
