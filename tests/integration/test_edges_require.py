"""Issue 35 item 3: ``--require-verified`` and ``--require-smoke`` did nothing, silently, for a
step that declares no ``verify`` / no smoke mode: the run launched as if the flag were not
there. Now refused in one line naming the step's entry, before anything connects or launches;
a step that declares them is gated as before. Real runs on the ``local`` target.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness

PIPELINE = """
[steps.plain]
command = ["{python}", "-c", "print('no check')"]

[steps.checked]
command = ["{python}", "-c", "print('made')"]
verify = { command = ["{python}", "-c", "pass"] }
smoke = { params = { out = "{smoke_dir}/out" } }
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


def no_runs(h: Harness) -> bool:
    return not list((h.workdir / ".harness" / "runs").glob("*"))


@pytest.mark.parametrize(
    ("flag", "what", "table"),
    [
        ("--require-verified", "no verify (an output check), so no run of it is ever verified",
         "verify"),
        ("--require-smoke", "no smoke mode, so no run of it is ever smoke-tested", "smoke"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["run", "report"])
def test_a_flag_the_step_cannot_meet_is_refused_in_one_line(
    local: Harness, command: str, flag: str, what: str, table: str
) -> None:
    r = local(command, "plain", "-t", "local", flag)
    assert r.code == 2, r.out + r.err
    assert "Traceback" not in r.err and r.out == ""
    assert r.err.splitlines() == [
        f"error: {local.cwd / 'pipeline.toml'}:2: steps.plain: {flag}: step 'plain' declares "
        f"{what}",
        f"hint: add [steps.plain.{table}] to its entry, or leave out {flag}",
    ]
    assert no_runs(local)


@pytest.mark.parametrize("flag", ["--require-verified", "--require-smoke"])
def test_a_step_that_declares_it_is_gated_as_before(local: Harness, flag: str) -> None:
    r = local("run", "checked", "-t", "local", flag)
    assert r.code == 1 and "not ready" in r.err, r.out + r.err  # never verified/smoke-tested
    assert no_runs(local)
    assert local("run", "checked", "-t", "local").code == 0  # without the flag: a warning


def test_report_without_a_step_says_the_flag_needs_one(local: Harness) -> None:
    r = local("report", "-t", "local", "--require-verified")
    assert r.code == 2, r.out + r.err
    assert r.err.splitlines()[0] == (
        "error: --require-verified applies to a step, and none was named"
    )
