"""Words, limits and one style of refusal (issue 44, items 10-12): real runs on ``local``."""

from __future__ import annotations

import json
import re
from pathlib import Path

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
