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
