"""A step's declared needs against the versions its own imports would see (pure)."""

from __future__ import annotations

import pytest

from harness.models import TargetFacts
from harness.report.model import BLOCKER, judge
from harness.runs.pipeline.requires import Need, needs, pip_line, step_paths
from harness.runs.target.describe import StepPlan


@pytest.mark.parametrize(
    ("spec", "found", "ok"),
    [
        (">=4.56,<5", "4.57.6", True),
        (">=4.56,<5", "5.17.0", False),
        (">=4.56,<5", "4.55.0", False),
        (">=4.56,<5", None, False),  # not installed at all
        (">=4.56", "4.58.0rc1", True),  # a pre-release inside the range counts
        ("<5", "5.0.0rc1", False),  # PEP 440: below 5 excludes 5.0 pre-releases
        (">=5", "not-a-version", False),
    ],
)
def test_need_is_met_by_version(spec: str, found: str | None, ok: bool) -> None:
    assert Need("transformers", spec, found).ok is ok


def test_step_paths_resolve_against_the_steps_cwd() -> None:
    env = {"PYTHONPATH": "tf4::/opt/x/../lib", "OTHER": "1"}
    assert step_paths(env, "/root/work") == ["/root/work/tf4", "/opt/lib"]
    assert step_paths({}, "/w") == []


def test_pip_line_installs_where_the_step_looks_first() -> None:
    unmet = needs({"transformers": ">=4.56,<5"}, {"transformers": "5.17.0"})
    want = "/v/bin/python -m pip install 'transformers>=4.56,<5'"
    assert pip_line("/v/bin/python", unmet, []) == want
    assert pip_line("/v/bin/python", unmet, ["/root/tf 4"]) == (
        "/v/bin/python -m pip install --target '/root/tf 4' 'transformers>=4.56,<5'"
    )


def _step(requires: list[dict[str, object]], pip: str | None = None) -> StepPlan:
    return StepPlan.from_dict(
        {"name": "train", "command": ["python"], "requires": requires, "pip": pip}
    )


@pytest.mark.parametrize(
    ("requires", "blockers"),
    [
        ([], []),
        ([{"dist": "transformers", "spec": ">=4.56,<5", "found": "4.57.6", "ok": True}], []),
        (
            [{"dist": "transformers", "spec": ">=4.56,<5", "found": "5.17.0", "ok": False}],
            ["step train needs transformers>=4.56,<5; its environment has 5.17.0"],
        ),
        (
            [{"dist": "accelerate", "spec": ">=1", "found": None, "ok": False}],
            ["step train needs accelerate>=1; its environment has not installed"],
        ),
    ],
)
def test_unmet_needs_block_the_launch_with_the_pip_line(
    requires: list[dict[str, object]], blockers: list[str]
) -> None:
    facts = TargetFacts.from_dict(
        {
            "gpus": [
                {
                    "index": 0,
                    "name": "gpu",
                    "memory_total_mib": None,
                    "memory_used_mib": None,
                    "memory_free_mib": None,
                }
            ]
        }
    )
    reasons = judge(facts, [], [], None, None, _step(requires, "PIP LINE"))
    got = [r for r in reasons if r.severity == BLOCKER]
    assert [r.text for r in got] == blockers
    assert all(r.hint == "PIP LINE" for r in got)
