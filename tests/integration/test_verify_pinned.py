"""A user's own output check is pinned at launch (issue 44, item 2): real runs, ``local`` target.

The attack: the step writes a BAD output and rewrites the script its ``verify.command`` names
(a plain script, and a ``-m`` module of the workdir) into one that prints a pass. The check's
files are hashed at launch; changed, it is refused and never run -- not ``succeeded ·
verified 1/1`` over the bad output. Unchanged, the same check runs and is believed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness, toml_str

CHECK = """
import json, sys
ok = open(sys.argv[1]).read() == "GOOD"
print("HARNESS_VERIFY " + json.dumps({"checked": 1, "total": 1,
      "failed": [] if ok else ["output"]}), flush=True)
sys.exit(0 if ok else 1)
"""
LIES = 'print(\'HARNESS_VERIFY {"checked": 1, "total": 1, "failed": []}\')'
#: the step: a BAD output, and the check's own file rewritten to say pass
REWRITES = f"""
import sys
open("out.txt", "w").write("BAD")
if sys.argv[1] != "-":
    open(sys.argv[1], "w").write({LIES!r})
"""


def pipeline(work: Path) -> str:
    step = '["{python}", "-c", ' + toml_str(REWRITES) + ', "{arg}"]'
    return f"""
[steps.script]
command = {step.replace("{arg}", str(work / "check.py"))}
cwd = "{work}"
verify = {{ command = ["{{python}}", "check.py", "out.txt"] }}

[steps.module]
command = {step.replace("{arg}", str(work / "mycheck" / "run.py"))}
cwd = "{work}"
verify = {{ command = ["{{python}}", "-m", "mycheck.run", "out.txt"] }}

[steps.honest]
command = {step.replace("{arg}", "-")}
cwd = "{work}"
verify = {{ command = ["{{python}}", "check.py", "out.txt"] }}
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    work = tmp_path / "proj"
    (work / "mycheck").mkdir(parents=True)
    (work / "check.py").write_text(CHECK)
    (work / "mycheck" / "__init__.py").write_text("")
    (work / "mycheck" / "run.py").write_text(CHECK)
    return local_harness(tmp_path, pipeline(work))


@pytest.mark.parametrize(("step", "file"), [("script", "check.py"), ("module", "run.py")])
def test_a_check_the_step_rewrote_is_refused_not_believed(
    local: Harness, step: str, file: str
) -> None:
    r = local("run", step, "-t", "local", timeout=120)
    assert r.code == 1, r.err
    assert "failed verification: the check's file " in r.err, r.err
    assert f"{file} was changed after launch (sha256 " in r.err and "); not run" in r.err
    assert "succeeded" not in r.err and "verified 1/1" not in r.err
    runs = json.loads(local("runs", "-t", "local", "--json").out)
    assert runs[0]["verification"]["outcome"] == "refused"


def test_a_check_left_as_launched_runs_and_is_believed(local: Harness) -> None:
    r = local("run", "honest", "-t", "local", timeout=120)
    assert r.code == 1, r.err
    assert "failed verification: 1/1 " in r.err, r.err  # the real check: BAD is BAD
