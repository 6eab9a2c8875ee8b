"""Service steps and per-step interpreters, the pure parts: pipeline keys and their errors,
what resolves, the service's words in ``harness runs``, which live run is reused."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.runs.follow.decode import last_lines
from harness.runs.follow.failure import summarize
from harness.runs.follow.services import live_service, users_of
from harness.runs.pipeline.digest import service_digest
from harness.runs.pipeline.file import parse_pipeline
from harness.runs.pipeline.resolve import resolve_step
from harness.runs.pipeline.steps import ResolvedStep
from harness.runs.record.lifecycle import derive_state, state_label
from harness.runs.record.models import RunInfo, RunRecord, RunStatus, SupervisorInfo
from harness.runs.record.parts import NeededService, ServiceRecord
from harness.runs.record.written import Ready
from tests.unit.test_runs_pipeline import BUILT

PIPE = """\
[params]
port = 8000
vllm_python = "/opt/vllm/bin/python"
model = "m/Llama"

[steps.serve]
python = "{vllm_python}"
command = ["{python}", "-m", "vllm.entrypoints.openai.api_server", "--port", "{port}",
           "--model", "{model}"]
service = { port = "{port}", health = "/health", ready_timeout = 600 }

[steps.generate]
command = ["{python}", "gen.py", "--port", "{port}"]
needs = ["serve"]
"""


def test_a_service_step_resolves_its_port_url_and_own_interpreter() -> None:
    p = parse_pipeline(PIPE, "p.toml")
    serve = resolve_step(p, "serve", BUILT)
    assert serve.argv[0] == "/opt/vllm/bin/python"  # {python} is the step's own interpreter
    assert serve.service == ServiceRecord(8000, "http://127.0.0.1:8000/health", 600.0)
    gen = resolve_step(p, "generate", BUILT, sets={"port": "9001"})
    assert gen.argv[0] == "/venv/bin/python" and gen.service is None  # the target's
    assert p.steps["generate"].needs == ("serve",)
    other = resolve_step(p, "serve", BUILT, sets={"port": "9001"}).service
    assert other is not None and other.url.endswith(":9001/health")


def test_an_entry_without_the_new_keys_digests_as_before() -> None:
    """A verified run vouches for its entry's digest: adding the keys must not change it."""
    p = parse_pipeline('[steps.a]\ncommand = ["x"]\n', "p.toml")
    assert set(p.steps["a"].to_dict()) >= {"name", "command"}
    assert not {"service", "needs", "python"} & set(p.steps["a"].to_dict())


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('[steps.s]\ncommand = ["x"]\nservice = { health = "/h" }\n', 3, "service.port: required"),
        ('[steps.s]\ncommand = ["x"]\nservice = { port = 1, health = "h" }\n', 3,
         "a path on the service's port"),
        ('[steps.s]\ncommand = ["x"]\nservice = { port = 1, ready_timeout = 0 }\n', 3,
         "ready_timeout: expected a finite number of seconds"),
        ('[steps.s]\ncommand = ["x"]\nservice = { port = 1, helth = "/" }\n', 3,
         "did you mean 'health'"),
        ('[steps.g]\ncommand = ["x"]\nneeds = ["serve"]\n', 3, "'serve': no such step"),
        ('[steps.a]\ncommand = ["x"]\n[steps.g]\ncommand = ["x"]\nneeds = ["a"]\n', 5,
         "'a': it is not a service"),
        ('[steps.g]\ncommand = ["x"]\nneeds = "serve"\n', 3, "expected a list of service step"),
        ('[steps.g]\ncommand = ["x"]\npython = ""\n', 3, "expected the path of an interpreter"),
        ('[steps.g]\ncommand = ["x"]\npython = "{python}"\n', 3, "cannot use itself"),
        ('[steps.s]\ncommand = ["x"]\nspread = "shard"\nservice = { port = 1 }\n', 3,
         "a service runs on one host"),
        ('[steps.s]\ncommand = ["x"]\nservice = { port = 1, unclaimed_minutes = 0 }\n', 3,
         "unclaimed_minutes: expected a finite number of minutes"),
        ('[steps.s]\ncommand = ["x"]\nservice = { port = 1, unclaimed_minutes = inf }\n', 3,
         "unclaimed_minutes: expected a finite number of minutes"),
    ],
)  # fmt: skip
def test_pipeline_key_errors_name_file_and_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    assert err.value.message.startswith(f"p.toml:{line}: "), err.value.message
    assert words in err.value.message + (err.value.hint or ""), err.value.message


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e-300", "0.5", "1e400"])
@pytest.mark.parametrize("where", ["service", "verify"])
def test_a_time_limit_that_is_no_limit_is_refused_at_load(value: str, where: str) -> None:
    """README: a timeout is a finite number of seconds; TOML reads nan, inf and 1e-300 as
    numbers (issue 44, item 9: "ready_timeout nans" was accepted)."""
    key = "service.ready_timeout" if where == "service" else "verify.timeout"
    text = (
        f'[steps.s]\ncommand = ["x"]\nservice = {{ port = 1, ready_timeout = {value} }}\n'
        if where == "service"
        else f'[steps.s]\ncommand = ["x"]\nverify = {{ command = ["y"], timeout = {value} }}\n'
    )
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    assert err.value.message == (
        f"p.toml:3: steps.s.{key}: expected a finite number of seconds, at least 1, "
        f"got {float(value)!r}"
    ), err.value.message
    assert "86400" in (err.value.hint or "")


def test_a_port_that_resolves_to_no_number_is_an_error_naming_its_line() -> None:
    p = parse_pipeline(PIPE, "p.toml")
    with pytest.raises(ConfigError, match=r"p.toml:10: steps.serve.service.port: the port is 'x'"):
        resolve_step(p, "serve", BUILT, sets={"port": "x"})


def run(
    status: RunStatus | None = None,
    alive: bool | None = True,
    ready: bool = False,
    digest: str = "d1",
    started: float = 1.0,
    rid: str = "serve-1",
) -> RunInfo:
    rec = RunRecord(id=rid, step="serve", argv=("x",), cwd="/w",
                    service=ServiceRecord(8000, "u", 30.0, digest=digest))  # fmt: skip
    return RunInfo(record=rec, supervisor=SupervisorInfo(pid=1, started_at=started),
                   supervisor_alive=alive, status=status,
                   ready=Ready(ready_at=2.0) if ready else None)  # fmt: skip


@pytest.mark.parametrize(
    ("info", "state", "label"),
    [
        (run(), "running", "service :8000 starting"),
        (run(ready=True), "running", "service :8000 ready"),
        (run(RunStatus(signal=15, stop_requested=True), False), "killed", "service :8000 stopped"),
        (run(RunStatus(exit_code=0), False), "succeeded", "service :8000 stopped"),
        (run(RunStatus(exit_code=1, not_ready="the server exited before it was ready"), False),
         "failed", "service :8000 failed (1): the server exited before it was ready"),
        (run(RunStatus(signal=15, not_ready="not ready within 2s"), False), "failed",
         "service :8000 failed (SIGTERM): not ready within 2s"),
        (run(RunStatus(exit_code=3), False, ready=True), "failed", "service :8000 failed (3)"),
        (run(None, False), "lost", "service :8000 lost"),
    ],
)  # fmt: skip
def test_a_service_is_shown_as_a_service_with_its_port_and_state(
    info: RunInfo, state: str, label: str
) -> None:
    assert info.state == state
    assert state_label(info) == label


def test_not_ready_is_failed_even_when_the_tree_was_signalled() -> None:
    assert derive_state(RunStatus(signal=9, not_ready="timeout"), False) == "failed"
    assert derive_state(RunStatus(signal=9, not_ready="x", stop_requested=True), False) == "killed"


def test_which_live_service_is_reused() -> None:
    old_ready = run(ready=True, started=1.0, rid="serve-a")
    newer_starting = run(started=5.0, rid="serve-b")
    other = run(ready=True, digest="d2", rid="serve-c")
    ended = run(RunStatus(exit_code=0), False, ready=True, rid="serve-d")
    assert live_service([old_ready, newer_starting, other, ended], "serve", "d1") is old_ready
    assert live_service([newer_starting, ended], "serve", "d1") is newer_starting
    assert live_service([other, ended], "serve", "d1") is None
    assert live_service([old_ready], "generate", "d1") is None


def test_the_digest_ignores_the_run_id_and_nothing_else() -> None:
    def step(run_id: str, model: str = "m") -> ResolvedStep:
        return ResolvedStep("serve", ("py", "--out", f"/w/runs/{run_id}/x", model), "/w",
                            {"HF_TOKEN": "s"}, {}, service=ServiceRecord(1, "u", 30.0))  # fmt: skip

    a = service_digest(step("serve-1"), "serve-1", "/w/runs/serve-1")
    assert a == service_digest(step("serve-2"), "serve-2", "/w/runs/serve-2")
    assert a != service_digest(step("serve-2", "m2"), "serve-2", "/w/runs/serve-2")


def test_last_lines_leave_out_harness_own_and_blank_lines() -> None:
    text = "INFO a\n\nERROR: boom\r\nharness: waiting for the service\nTraceback end\n"
    assert last_lines(text, 2) == ["ERROR: boom", "Traceback end"]


def test_who_uses_a_service_is_every_live_run_that_recorded_it() -> None:
    def user(rid: str, alive: bool, uses: str = "serve-1", started: float = 1.0) -> RunInfo:
        rec = RunRecord(id=rid, step="generate", argv=("x",), cwd="/w",
                        services=(NeededService("serve", uses),))  # fmt: skip
        return RunInfo(record=rec, supervisor=SupervisorInfo(pid=1, started_at=started),
                       supervisor_alive=alive,
                       status=None if alive else RunStatus(exit_code=0))  # fmt: skip

    runs = [run(ready=True), user("gen-b", True, started=2.0), user("gen-a", True),
            user("gen-ended", False), user("gen-other", True, uses="serve-2")]  # fmt: skip
    assert users_of(runs, "serve-1") == ["gen-a", "gen-b"]
    assert users_of(runs, "serve-3") == []


def test_a_service_stopped_under_a_step_is_its_failure_line() -> None:
    log = (
        "sample 3: request failed: <urlopen error [Errno 111] Connection refused>\n"
        "harness: service serve-1: the service was stopped (harness stop) while this step "
        "used it, at 10:01:02\n"
    )
    got = summarize(log, "gpu", "generate")
    assert got is not None
    assert got.exc_type == "service" and "stopped (harness stop)" in got.message
    assert got.hint is not None and "stopped under it by harness stop" in got.hint
    assert got.commands == ("harness runs -t gpu",)
    ended = summarize(log.replace("was stopped (harness stop)", "ended"), "gpu")
    assert ended is not None and ended.hint is not None and "ended on its own" in ended.hint
