"""Issue 35: the edges of ``harness run`` / ``runs`` / ``stop`` a new user still trips on, on
the ``local`` target with real runs (no mocks).

10. ``run STEP``'s own review said **ready** while ``report STEP`` said **not ready** for the
    same step (a missing script): ``run`` made its review without the preflight, then refused
    at the preflight. Now the launch makes its preflight first and shows the review with its
    verdicts in it: the same review, in the same words, as ``report``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_edges_runs2 import PIPELINE, no_runs
from tests.integration.test_runs_ssh import Harness, local_harness


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


def review_of(text: str) -> list[str]:
    """The review's verdict line and its reasons, as printed."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("run review "))
    out = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.startswith(("  ✗ ", "  ! ", "  · ")):
            break
        out.append(line)
    return out


@pytest.mark.parametrize(
    ("step", "code", "verdict"),
    [
        ("noscript", 2, "not ready"),
        ("missing", 2, "not ready"),
        ("nocwd", 2, "not ready"),
        ("hello", 0, "ready"),
    ],
)
def test_run_shows_the_review_that_report_shows(
    local: Harness, step: str, code: int, verdict: str
) -> None:
    report = local("report", step, "-t", "local")
    run = local("run", step, "-t", "local")
    assert run.code == code, run.out + run.err
    said = review_of(run.err)
    assert said[0] == f"run review local: {verdict}", run.err
    assert said == review_of(report.out), (run.err, report.out)
    if code:
        assert "error: preflight refused to launch" in run.err and no_runs(local)


def test_force_does_not_launch_what_the_preflight_refuses(local: Harness) -> None:
    run = local("run", "noscript", "-t", "local", "--force")
    assert run.code == 2 and "error: preflight refused to launch noscript" in run.err
    assert "launching anyway" not in run.err and no_runs(local)
