"""A step's output check (``verify`` in pipeline.toml), run by the supervisor on the target.

Real runs on the ``local`` target: a step that exits 0 reads ``succeeded · verified N/N`` only
when its check passes; a check that finds bad output, crashes or runs out of time makes the
run ``failed`` -- in ``harness run``'s last line and exit code, in ``runs``, in ``--json`` and
in ``report`` -- never "succeeded". The review names a step with no verified run, or whose
entry changed since it, and ``--require-verified`` makes that a blocker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness, toml_str

CHECK = """
import json, os, sys
folder, mode = sys.argv[1], sys.argv[2]
names = sorted(os.listdir(folder))
bad = [n for n in names if open(os.path.join(folder, n)).read() != "ok"]
if mode == "crash":
    raise RuntimeError("the checker itself broke")
if mode == "slow":
    import time; time.sleep(60)
print("checking", len(names), "files", flush=True)
print("HARNESS_VERIFY " + json.dumps({"checked": len(names), "total": len(names),
      "failed": bad, "detail": "compared with the reference"}), flush=True)
sys.exit(1 if bad else 0)
"""
MAKE = """
import os, sys
folder, n, bad = sys.argv[1], int(sys.argv[2]), set(sys.argv[3].split(","))
os.makedirs(folder, exist_ok=True)
for i in range(n):
    with open(os.path.join(folder, f"data_{i}"), "w") as f:
        f.write("bad" if str(i) in bad else "ok")
print("made", n, flush=True)
"""

#: a step that resumes (as speculators' generate does): it writes only the files not there yet
ONCE = """
import os, sys
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
for i in range(4):
    path = os.path.join(folder, f"hs_{i}")
    if not os.path.exists(path):
        open(path, "w").write("ok")
"""
#: its check: which files predate the step's start (the supervisor's HARNESS_STEP_STARTED)
KEPT = """
import json, os, sys
folder, since = sys.argv[1], float(os.environ["HARNESS_STEP_STARTED"])
names = sorted(os.listdir(folder))
old = sum(os.stat(os.path.join(folder, n)).st_mtime < since for n in names)
print("HARNESS_VERIFY " + json.dumps({"checked": len(names), "total": len(names), "failed": [],
      "kept": {"files": old, "of": len(names)}}), flush=True)
"""


def pipeline(mode: str = "check", timeout: int = 30) -> str:
    return f"""
[params]
out = "{{workdir}}/out"
n = "6"
bad = ""
mode = "{mode}"

[steps.make]
command = ["{{python}}", "-c", {toml_str(MAKE)}, "{{out}}", "{{n}}", "{{bad}}"]
[steps.make.verify]
command = ["{{python}}", "-c", {toml_str(CHECK)}, "{{out}}", "{{mode}}"]
timeout = {timeout}

[steps.plain]
command = ["{{python}}", "-c", "print('no check')"]

[steps.resume]
command = ["{{python}}", "-c", {toml_str(ONCE)}, "{{workdir}}/hs"]
verify = {{ command = ["{{python}}", "-c", {toml_str(KEPT)}, "{{workdir}}/hs"] }}

[steps.secret]
command = ["{{python}}", "-c", "print('made')"]
env = {{ HF_TOKEN = "hf-sekrit-value-1234" }}
verify = {{ command = ["{{python}}", "-c", "import sys", "hf-sekrit-value-1234"] }}

[steps.broken]
command = ["{{python}}", "-c", "raise SystemExit(3)"]
verify = {{ command = ["{{python}}", "-c", "open('{{workdir}}/verified', 'w')"] }}
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, pipeline())


def runs(h: Harness) -> dict[str, dict]:
    r = h("runs", "-t", "local", "--json")
    assert r.code == 0, r.err
    return {x["record"]["id"]: x for x in json.loads(r.out)}


def last(h: Harness) -> dict:
    return max(runs(h).values(), key=lambda x: x["record"]["created_at"])


def test_a_check_says_which_outputs_this_run_did_not_write(local: Harness) -> None:
    """The check is told when the step started: a second run of a step that resumes wrote
    nothing, and its verdict says the files it vouches for are an earlier run's."""
    r = local("run", "resume", "-t", "local")
    assert r.code == 0, r.err
    assert last(local)["label"] == "succeeded · verified 4/4"
    r = local("run", "resume", "-t", "local")
    assert r.code == 0, r.err
    label = "succeeded · verified 4/4; 4 of 4 files predate this run (kept from an earlier one)"
    assert last(local)["label"] == label
    assert label in r.err
    assert last(local)["verification"]["kept"] == {"files": 4, "of": 4}


def test_a_passing_check_reads_verified_everywhere(local: Harness) -> None:
    r = local("run", "make", "-t", "local")
    assert r.code == 0, r.err
    assert "succeeded · verified 6/6 (compared with the reference)" in r.err
    assert "harness: verifying the output" in r.out and "checking 6 files" in r.out
    run = last(local)
    assert run["state"] == "succeeded" and run["exit"] == 0
    assert run["label"] == "succeeded · verified 6/6 (compared with the reference)"
    assert run["verification"]["outcome"] == "passed"
    assert run["verification"]["checked"] == 6 and run["verification"]["failed"] == []
    table = local("runs", "-t", "local")
    assert "verified 6/6" in table.out


@pytest.mark.parametrize(
    ("sets", "mode", "code", "words", "outcome"),
    [
        (["bad=2,3,5"], "check", 1,
         "failed verification: 3/6 samples differ (data_2, data_3, data_5)", "failed"),
        ([], "crash", 1, "failed verification: the check crashed (exit 1); see the log", "crashed"),
    ],
)  # fmt: skip
def test_output_that_fails_its_check_never_reads_succeeded(
    local: Harness, sets: list[str], mode: str, code: int, words: str, outcome: str
) -> None:
    args = [x for s in [*sets, f"mode={mode}"] for x in ("--set", s)]
    r = local("run", "make", "-t", "local", *args)
    assert r.code == code, r.err
    assert words in r.err and "succeeded" not in r.err
    run = last(local)
    assert run["state"] == "failed" and run["exit"] == code
    assert run["label"].startswith(words)
    assert run["verification"]["outcome"] == outcome
    assert run["status"]["exit_code"] == 0  # the step itself exited 0
    table = local("runs", "-t", "local")
    assert "failed verification" in table.out and "succeeded" not in table.out
    review = local("report", "make", "-t", "local", *args)
    assert f"step make's last run: {run['record']['id']} {words}" in review.out, review.out
    logs = local("logs", run["record"]["id"], "-t", "local")
    assert "harness: verifying the output" in logs.out
    if mode == "crash":
        assert "the checker itself broke" in logs.out


def test_a_check_that_runs_out_of_time_is_a_failure_and_is_ended(local: Harness) -> None:
    (local.cwd / "pipeline.toml").write_text(pipeline("slow", timeout=2))
    r = local("run", "make", "-t", "local", timeout=90)
    assert r.code == 124, r.err
    assert "failed verification: the check timed out after 2 s" in r.err
    run = last(local)
    assert run["state"] == "failed" and run["verification"]["outcome"] == "timed-out"


def test_no_check_declared_reads_unverified_and_a_failed_step_is_not_checked(
    local: Harness,
) -> None:
    r = local("run", "plain", "-t", "local")
    assert r.code == 0 and "succeeded · unverified" in r.err, r.err
    r = local("run", "broken", "-t", "local")
    assert r.code == 3 and "failed (3)" in r.err, r.err
    assert not (local.workdir / "verified").exists()  # the check never ran
    assert last(local)["verification"] is None


def test_the_review_knows_what_the_last_verified_run_vouches_for(local: Harness) -> None:
    r = local("report", "make", "-t", "local")
    assert "step make has no verified run here" in r.out, r.out
    blocked = local("report", "make", "-t", "local", "--require-verified")
    assert "not ready" in blocked.out and "has no verified run here" in blocked.out
    refused = local("run", "make", "-t", "local", "--require-verified")
    assert refused.code != 0 and "not launching make" in refused.err
    assert local("run", "make", "-t", "local").code == 0
    r = local("report", "make", "-t", "local", "--require-verified")
    assert "verified run" not in r.out and "not verified since" not in r.out, r.out
    # the pipeline entry changes: the verified run no longer speaks for it
    (local.cwd / "pipeline.toml").write_text(pipeline().replace('n = "6"', 'n = "7"'))
    r = local("report", "make", "-t", "local")
    assert "step make not verified since its pipeline.toml entry changed" in r.out, r.out


def test_the_checks_command_line_in_the_log_is_masked(local: Harness) -> None:
    r = local("run", "secret", "-t", "local")
    assert r.code == 0 and "succeeded · verified" in r.err, r.err
    log = (local.run_dir(last(local)["record"]["id"]) / "log").read_text()
    assert "harness: verifying the output:" in log
    assert "hf-sekrit-value-1234" not in log and "***" in log
