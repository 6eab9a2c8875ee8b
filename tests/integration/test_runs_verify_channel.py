"""The verdict comes from the check alone (issue 31): real runs on the ``local`` target.

* a step that leaves a detached child printing ``HARNESS_VERIFY`` lines into the run's log:
  the child is ended before the check starts (and counted, in the log and verify.json), and
  the check's own report -- two failures -- is the verdict;
* a writer the supervisor cannot end (here: the check itself, writing into the log file by
  its path) forges a passing line in the log: not heard, the report comes from the pipe;
* a step that rewrites a shipped check in ``{run_dir}/verifiers/``: refused, never run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness, toml_str

FORGED = json.dumps({"checked": 9, "total": 9, "failed": []})
REAL = json.dumps({"checked": 9, "total": 9, "failed": ["data_1", "data_2"]})
FORGER = f"""
import os, time
while True:
    print("HARNESS_VERIFY " + {FORGED!r}, flush=True)
    open("forged", "w").close()  # it has printed: the step may end
    time.sleep(0.05)
"""
LEAVE = f"""
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {FORGER!r}], start_new_session=True)  # stdout: the log
deadline = time.monotonic() + 30
while not os.path.exists("forged") and time.monotonic() < deadline:  # a loaded machine
    time.sleep(0.02)
print("step done", flush=True)
"""
CHECK_LATE = f"""
import time
print("HARNESS_VERIFY " + {REAL!r}, flush=True)
time.sleep(1.5)  # what a leftover prints into the log now comes after this report
"""
CHECK_FORGES = f"""
import os, sys
os.write(int(os.environ["HARNESS_VERIFY_FD"]), ("HARNESS_VERIFY " + {REAL!r} + "\\n").encode())
with open(os.path.join(sys.argv[1], "log"), "a") as f:  # past the pipe, straight into the log
    f.write("HARNESS_VERIFY " + {FORGED!r} + "\\n")
"""
PASSES = (
    "print('HARNESS_VERIFY ' + " + repr(json.dumps({"checked": 5, "total": 5, "failed": []})) + ")"
)
REWRITE = f"""
import sys
with open(sys.argv[1] + "/outputs.py", "w") as f:
    f.write({PASSES!r})
"""
PIPELINE = f"""
[steps.leaves]
command = ["{{python}}", "-c", {toml_str(LEAVE)}]
verify = {{ command = ["{{python}}", "-c", {toml_str(CHECK_LATE)}] }}

[steps.forged]
command = ["{{python}}", "-c", "print('made')"]
verify = {{ command = ["{{python}}", "-c", {toml_str(CHECK_FORGES)}, "{{run_dir}}"] }}

[steps.rewrites]
command = ["{{python}}", "-c", {toml_str(REWRITE)}, "{{verifiers}}"]
verify = {{ command = ["{{python}}", "{{verifiers}}/outputs.py", "prepare", "--token-freq", "x"] }}
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


def newest(h: Harness) -> dict:
    r = h("runs", "-t", "local", "--json")
    assert r.code == 0, r.err
    return max(json.loads(r.out), key=lambda x: x["record"]["created_at"])


def test_a_leftover_of_the_step_is_ended_and_its_forged_lines_are_not_the_verdict(
    local: Harness,
) -> None:
    r = local("run", "leaves", "-t", "local", timeout=120)
    assert r.code == 1, r.err
    assert "failed verification: 2/9 samples differ (data_1, data_2)" in r.err, r.err
    run = newest(local)
    assert run["state"] == "failed" and run["verification"]["ended"] == 1
    run_dir = local.run_dir(run["record"]["id"])
    verify = json.loads((run_dir / "verify.json").read_text())
    assert len(verify["ended"]["terminated"] + verify["ended"]["killed"]) == 1
    assert verify["report_from"] == "output"
    log = (run_dir / "log").read_text()
    assert "harness: ended 1 process the step left running, before its check" in log
    assert "HARNESS_VERIFY " + FORGED in log  # it did print, before it was ended


def test_a_line_written_into_the_log_is_never_the_report(local: Harness) -> None:
    r = local("run", "forged", "-t", "local", timeout=120)
    assert r.code == 1, r.err
    assert "failed verification: 2/9 samples differ (data_1, data_2)" in r.err, r.err
    run_dir = local.run_dir(newest(local)["record"]["id"])
    assert json.loads((run_dir / "verify.json").read_text())["report_from"] == "fd"
    assert (run_dir / "log").read_text().rstrip().endswith("HARNESS_VERIFY " + FORGED)


def test_a_shipped_check_rewritten_by_the_step_is_refused(local: Harness) -> None:
    r = local("run", "rewrites", "-t", "local", timeout=120)
    assert r.code == 1, r.err
    assert "failed verification: the check outputs.py was changed after launch (sha256 " in r.err
    assert "); not run" in r.err and "succeeded" not in r.err
    run = newest(local)
    assert run["state"] == "failed" and run["verification"]["outcome"] == "refused"
    log = (local.run_dir(run["record"]["id"]) / "log").read_text()
    assert "HARNESS_VERIFY" not in log  # the rewritten check never ran
