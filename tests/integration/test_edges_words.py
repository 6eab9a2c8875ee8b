"""Words, limits and one style of refusal (issue 44, items 10-12): real runs on ``local``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import local_harness, toml_str

LONG = json.dumps(
    {
        "checked": 3,
        "total": 3,
        "failed": [f"data_{i}_with_a_rather_long_sample_name" for i in (1, 2, 3)],
    }
)


def test_the_verdict_line_is_never_wrapped_into_a_pipe(tmp_path: Path) -> None:
    """README: into a pipe or a file no line is wrapped -- the verdict was cut at 80 columns."""
    code = f"print('HARNESS_VERIFY ' + {LONG!r})"
    h = local_harness(
        tmp_path,
        '[steps.make]\ncommand = ["{python}", "-c", "pass"]\n'
        f'verify = {{ command = ["{{python}}", "-c", {toml_str(code)}] }}\n',
    )
    h.env.pop("COLUMNS", None)  # no terminal, no width: Rich's 80
    r = h("run", "make", "-t", "local", timeout=120)
    assert r.code == 1, r.err
    verdict = [x for x in r.err.splitlines() if x.startswith("✗ make-")]
    assert len(verdict) == 1 and re.search(
        r"failed verification: 3/3 samples differ \(data_1_with_a_rather_long_sample_name, "
        r"data_2_with_a_rather_long_sample_name, data_3_with_a_rather_long_sample_name\) "
        r"after \d+:\d\d$",
        verdict[0],
    ), r.err


FLAGGED = """
import json, os, sys
ok = not os.path.exists(sys.argv[1])
print("HARNESS_VERIFY " + json.dumps({"checked": 1, "total": 1, "failed": [] if ok else ["out"]}))
sys.exit(0 if ok else 1)
"""


def test_require_verified_counts_the_newest_run_of_the_same_environment(tmp_path: Path) -> None:
    """A run passed its check, a newer one of the same environment failed it: not ready."""
    flag = tmp_path / "now-bad"
    h = local_harness(
        tmp_path,
        '[steps.make]\ncommand = ["{python}", "-c", "pass"]\n'
        f'verify = {{ command = ["{{python}}", "-c", {toml_str(FLAGGED)}, "{flag}"] }}\n',
    )
    assert h("run", "make", "-t", "local", timeout=120).code == 0
    flag.write_text("")
    newer = h("run", "make", "-t", "local", timeout=120)
    assert newer.code == 1 and "failed verification" in newer.err, newer.err
    r = h("report", "make", "-t", "local", "--require-verified")
    assert "not ready" in r.out, r.out
    assert "step make not verified since its newest run make-" in r.out
    assert h("run", "make", "-t", "local", "--require-verified").code != 0


SERVE = '[steps.serve]\ncommand = ["{{python}}", "-c", "pass"]\nservice = {{ port = {port} }}\n'


@pytest.mark.parametrize(
    ("argv", "pipeline", "line"),
    [
        (["run", "serve"], SERVE.format(port='"abc"'),
         "pipeline.toml:3: steps.serve.service.port: the port is 'abc', not a port number"),
        (["report", "serve"], SERVE.format(port="70000"),
         "pipeline.toml:3: steps.serve.service.port: the port is '70000', not a port number"),
        (["report", "nosuchstep"], SERVE.format(port="8000"), "no step 'nosuchstep' in "),
        (["runs", "--limit", "-1"], SERVE.format(port="8000"),
         "Invalid value for '--limit': -1 is not in the range x>=0."),
        (["stop", "--pipeline", "pipeline.toml", "serve"], SERVE.format(port="8000"),
         "No such option: --pipeline"),
        (["logs", "serve", "--tail", "-5"], SERVE.format(port="8000"),
         "--tail and --offset take a number >= 0"),
    ],
    ids=["port-abc", "port-70000", "report-nosuchstep", "runs-limit", "stop-pipeline", "logs-tail"],
)  # fmt: skip
def test_a_bad_command_line_or_pipeline_is_one_line_before_any_work(
    tmp_path: Path, argv: list[str], pipeline: str, line: str
) -> None:
    """One style of refusal, at load: ``error: ...`` and a hint, exit 2, no review, no box."""
    h = local_harness(tmp_path, pipeline)
    r = h(*argv, "-t", "local", timeout=60)
    assert r.code == 2, r.out + r.err
    first, *rest = r.err.splitlines()
    assert first.startswith("error: ") and line in first, r.err
    assert len(rest) <= 1 and all(x.startswith("hint: ") for x in rest), r.err
    assert r.out == "" and "review" not in r.err  # nothing was looked at first
