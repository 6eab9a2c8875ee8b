"""A warm check's gate is reachable by the step (issue 44, item 1): the real supervisor program.

A shipped check that names ``HARNESS_VERIFY_GATE`` starts beside the step and waits at a pipe
for ``go``. Any process of the same user can open that pipe through ``/proc/PID/fd/N`` and say
``go`` itself. The step below does: it writes a good output, opens the check's gate, lets the
check judge it, then overwrites the output with a bad one and exits 0. The verdict of a check
that did not answer the supervisor's own ``go`` (a secret sent with it, which the report must
carry back) is refused -- never ``passed`` over a bad output.

The check is a stand-in for the extraction check (which needs torch): the same gate
(``_gate.py``) and report (``_hs_report.emit``), shipped into the run's ``verifiers/`` and
pinned by sha256 as launch does; the supervisor is run as launch runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.runs.record.verdict import describe
from harness.runs.record.verification import Verification
from harness.runs.target.remote import program_sources, verifier_sources

#: what the check judges: the output reads GOOD (it names HARNESS_VERIFY_GATE: a warm check)
GATED = """
import os, sys, time
from _gate import wait_for_go  # HARNESS_VERIFY_GATE: waits for the supervisor's go
from _hs_report import emit
if not wait_for_go():
    sys.exit(0)
path, linger = sys.argv[1], float(sys.argv[2])
ok = os.path.exists(path) and open(path).read() == "GOOD"
emit({"checked": 1, "total": 1, "failed": [] if ok else ["output"]}, "HARNESS_VERIFY ")
time.sleep(linger)  # a real check lingers too (freeing the GPU, closing files)
sys.exit(0 if ok else 1)
"""

#: the step: GOOD, the check's gate opened through /proc, go; once judged: BAD, exit 0
STEP = """
import os, sys, time
path, run_id, mode = sys.argv[1], sys.argv[2], sys.argv[3]
wait_exit = mode == "exit"
open(path, "w").write("BAD" if mode == "garble" else "GOOD")
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            env = dict(kv.split(b"=", 1) for kv in
                       open(f"/proc/{pid}/environ", "rb").read().split(b"\\0") if b"=" in kv)
        except OSError:
            continue
        if env.get(b"HARNESS_RUN_ID") == run_id.encode() and b"HARNESS_VERIFY_GATE" in env:
            gate = int(env[b"HARNESS_VERIFY_GATE"])
            with open(f"/proc/{pid}/fd/{gate}", "wb") as f:
                f.write(b"go" if mode == "garble" else b"go\\n")
            if mode == "garble":  # the supervisor's go now reads "gogo ...": the check leaves
                sys.exit(0)
            if wait_exit:  # until the check has judged and exited
                while os.path.exists(f"/proc/{pid}") and (
                    open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"):
                    time.sleep(0.02)
            else:
                time.sleep(1.5)  # it has judged, it is still running
            open(path, "w").write("BAD")
            print("said go; output now BAD", flush=True)
            sys.exit(0)
    time.sleep(0.02)
sys.exit(3)
"""


def supervise(tmp_path: Path, linger: float, mode: str, step: str = STEP) -> dict:
    """One run as ``launch`` makes it: the run program and the shipped checks (sha256 pinned)
    in a run directory, the spec on the supervisor's stdin; its verify.json once it ended."""
    run_id = f"r-gate-{os.getpid()}-{time.monotonic_ns()}"
    run_dir = tmp_path / ".harness" / "runs" / run_id
    (run_dir / "verifiers").mkdir(parents=True)
    for name, text in program_sources().items():
        (run_dir / name).write_text(text)
    shipped = {**verifier_sources(), "gated.py": GATED}
    for name, text in shipped.items():
        (run_dir / "verifiers" / name).write_text(text)
    output = tmp_path / "output.txt"
    check = [sys.executable, str(run_dir / "verifiers" / "gated.py"), str(output), str(linger)]
    spec = {
        "argv": [sys.executable, "-c", step, str(output), run_id, mode],
        "cwd": str(tmp_path), "env": {}, "verify": check, "verify_timeout": 60,
        "verifiers_sha256": {
            n: hashlib.sha256(t.encode()).hexdigest() for n, t in shipped.items()
        },
    }  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    proc = subprocess.run(
        [sys.executable, "-B", str(run_dir / "supervisor.py"), "supervise", str(run_dir)],
        input=json.dumps(spec).encode(), env=env, timeout=120, capture_output=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert json.loads((run_dir / "status.json").read_text())["exit_code"] == 0
    return json.loads((run_dir / "verify.json").read_text())


@pytest.mark.parametrize(
    ("linger", "mode"),
    [(0.0, "exit"), (4.0, "running"), (0.0, "garble")],
    ids=["check-exited-before-go", "check-running-at-go", "go-garbled"],
)
def test_a_go_the_step_said_is_not_the_supervisors(
    tmp_path: Path, linger: float, mode: str
) -> None:
    """The attack: the step says go, the check passes GOOD, the step leaves BAD and exits 0
    (or: it garbles the supervisor's go -- "go" with no end -- and the check leaves)."""
    verify = supervise(tmp_path, linger, mode)
    assert (tmp_path / "output.txt").read_text() == "BAD"
    v = Verification.from_facts(verify)
    assert v is not None
    words = describe(v)
    assert "not taken" in words and "passed" not in words and "verified" not in words, words
    assert verify["warm"] is True
    assert "go" not in (verify["report"] or {})  # the secret is not kept on disk


def test_a_warm_check_that_answers_the_supervisors_go_is_believed(tmp_path: Path) -> None:
    step = "import sys, time; time.sleep(0.5); open(sys.argv[1], 'w').write('GOOD')"
    verify = supervise(tmp_path, 0.0, "exit", step)
    v = Verification.from_facts(verify)
    assert v is not None and describe(v) == "verified 1/1", verify
    assert verify["warm"] is True and "refused" not in verify
