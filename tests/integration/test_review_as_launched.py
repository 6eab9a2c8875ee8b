"""Issue 45 item 2: ``harness run``'s review judges the step exactly as it launches -- its run
id, the ``extra`` args after ``--`` -- not a second resolve of the pipeline file (which had
run id ``<run-id>`` and no extra args): ``review.json`` says what the run was started on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_runs_ssh import local_harness

PIPELINE = """\
[steps.echo]
command = ["{python}", "-c", "import sys; print(sys.argv[1:])", "{run_dir}/out"]
"""


def test_the_saved_review_is_of_the_step_as_launched(tmp_path: Path) -> None:
    h = local_harness(tmp_path, PIPELINE)
    r = h("run", "echo", "-t", "local", "--", "--flag", "x")
    assert r.code == 0, r.out + r.err
    (run_dir,) = (h.workdir / ".harness" / "runs").iterdir()
    step = json.loads((run_dir / "review.json").read_text())["step"]
    assert step["command"][-3:] == [f"{run_dir}/out", "--flag", "x"], step["command"]
    assert f"{run_dir}/out', '--flag', 'x']" in r.out  # what ran is what was reviewed
    # harness report, no launch: the step as the pipeline file says, no run id yet
    got = h("report", "echo", "-t", "local", "--format", "json")
    assert json.loads(got.out)["step"]["command"][-1].endswith("/<run-id>/out"), got.out
