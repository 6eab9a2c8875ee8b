"""Pure run decisions: state, exit code, label, run matching, stale GPU holders, verdicts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.errors import ConfigError, UsageError
from harness.models import GpuInfo
from harness.runs.record.lifecycle import derive_state, exit_code_of, state_label
from harness.runs.record.models import (
    FailureSummary,
    Frame,
    GpuHolder,
    Phase,
    RunInfo,
    RunRecord,
    RunStatus,
    SupervisorInfo,
    Verdict,
)
from harness.runs.record.state import (
    classify_holders,
    format_duration,
    match_run,
    new_run_id,
    tensor_parallel,
)
from harness.runs.record.stopped import StopReport
from harness.runs.target.preflight import decide
from harness.runs.target.remote import PreflightFacts
from harness.runs.target.timings import Timings
from harness.targets.local import LocalTarget

STATES = [
    # (status, supervisor alive, state, label, exit code)
    (None, True, "running", "running", None),
    (None, False, "lost", "lost", 1),
    (None, None, "lost", "lost", 1),
    (RunStatus(exit_code=0), False, "succeeded", "succeeded · unverified", 0),
    (RunStatus(exit_code=3), False, "failed", "failed (3)", 3),
    (RunStatus(exit_code=3), True, "failed", "failed (3)", 3),  # status wins over liveness
    (RunStatus(signal=9), False, "killed", "killed (SIGKILL)", 137),
    (RunStatus(signal=15, stop_requested=True), False, "killed", "killed (SIGTERM)", 143),
    (RunStatus(exit_code=1, stop_requested=True), False, "killed", "killed (exit 1)", 1),
    (RunStatus(exit_code=0, stop_requested=True), False, "killed", "killed (exit 0)", 143),
    (RunStatus(stop_requested=True, error="sup gone"), False, "killed", "killed", 1),
    (RunStatus(exit_code=127, error="cannot start x"), False, "failed", "failed (127)", 127),
]


def info(
    status: RunStatus | None = None,
    alive: bool | None = None,
    run_id: str = "extract-20250107-142233-3fa9",
    step: str = "extract",
    started: float = 1000.0,
) -> RunInfo:
    return RunInfo(
        record=RunRecord(id=run_id, step=step, argv=("python", "x.py"), cwd="/w"),
        supervisor=SupervisorInfo(pid=10, starttime=5, started_at=started),
        supervisor_alive=alive,
        status=status,
        observed_at=started + 65.0,
    )


@pytest.mark.parametrize(("status", "alive", "state", "label", "code"), STATES)
def test_state_label_and_exit_code(
    status: RunStatus | None, alive: bool | None, state: str, label: str, code: int | None
) -> None:
    assert derive_state(status, alive) == state
    i = info(status, alive)
    assert (i.state, state_label(i), exit_code_of(i)) == (state, label, code)


RUNS = [
    info(run_id="extract-20250107-100000-aaaa", step="extract", started=1.0),
    info(run_id="extract-20250107-110000-bbbb", step="extract", started=2.0),
    info(run_id="train-20250107-120000-cccc", step="train", started=3.0),
]

MATCHES = [
    ("extract-20250107-100000-aaaa", "extract-20250107-100000-aaaa"),
    ("last", "train-20250107-120000-cccc"),
    ("extract", "extract-20250107-110000-bbbb"),  # a step name: its latest run
    ("train-2025", "train-20250107-120000-cccc"),  # a unique prefix
]


@pytest.mark.parametrize(("query", "want"), MATCHES)
def test_match_run(query: str, want: str) -> None:
    assert match_run(RUNS, query).id == want


@pytest.mark.parametrize(
    ("runs", "query", "message"),
    [
        (RUNS, "extract-2025", "matches 2 runs"),
        (RUNS, "vocab", "no run 'vocab'"),
        ([], "last", "no runs yet"),
    ],
)
def test_match_run_errors(runs: list[RunInfo], query: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        match_run(runs, query)


def test_new_run_id_sorts_by_time_and_refuses_odd_steps() -> None:
    a = new_run_id("extract", now=0.0, token="0001")
    assert a == "extract-19700101-000000-0001"
    assert new_run_id("extract", now=60.0) > a
    with pytest.raises(UsageError):
        new_run_id("../x")


def holder(pid: int, ppid: int = 1, run_id: str | None = None, comm: str = "python") -> GpuHolder:
    return GpuHolder(
        pid=pid, starttime=pid * 10, comm=comm, cmdline=f"{comm} w.py", ppid=ppid,
        parent_comm="bash" if ppid > 1 else "init", run_id=run_id, devices=("/dev/nvidia0",),
    )  # fmt: skip


def test_classify_holders() -> None:
    live = info(None, True, run_id="live")
    done = info(RunStatus(exit_code=0), False, run_id="done")
    holders = [
        holder(1, ppid=1),  # orphan: stale
        holder(2, ppid=500),  # someone's process with a live parent: left alone
        holder(3, ppid=500, run_id="live"),  # a worker of a running run: busy
        holder(4, ppid=500, run_id="done"),  # leftover of a finished run: stale
        holder(5, ppid=1, comm="nvidia-persistenced"),  # a daemon: ignored
        holder(6, ppid=500, run_id="elsewhere"),  # unknown run, live parent: left alone
        replace(holder(7, ppid=77), parent_comm="tini"),  # re-parented to an init: stale
    ]
    stale, busy, others = classify_holders(holders, [live, done])
    assert [h.pid for h in stale] == [1, 4, 7]
    assert [(h.pid, why) for h, why in busy] == [(3, "run live is running")]
    assert [h.pid for h in others] == [2, 6]


def facts(**over: object) -> PreflightFacts:
    base = PreflightFacts(
        python="/usr/bin/python3", python_version="3.12.3", home="/root",
        workdir="/w", workdir_exists=True, workdir_writable=True, cwd="/w", cwd_exists=True,
        argv0="python3", resolved="/usr/bin/python3", script="/w/x.py", script_exists=True,
        gpus_available=True, gpus_reason=None,
        gpus=(GpuInfo(0, "NVIDIA H100 80GB HBM3", 81559, 1024, 80535),), holders=(), runs=(),
    )  # fmt: skip
    return replace(base, **over)  # type: ignore[arg-type]


VERDICTS = [
    # (facts overrides, kill_stale, {check: level}, fragment of the first failing message)
    ({}, False, {"command": "ok", "GPUs": "ok", "stale GPU": "ok"}, None),
    ({"resolved": None}, False, {"command": "fail"}, "'python3' not found"),
    ({"script_exists": False}, False, {"command": "fail"}, "script /w/x.py not found"),
    ({"cwd": "/w/sub", "cwd_exists": False}, False, {"command": "fail"}, "cwd /w/sub"),
    ({"workdir_exists": False, "cwd_exists": False}, False, {"workdir": "warn", "command": "ok"},
     None),
    ({"workdir_writable": False}, False, {"workdir": "fail"}, "not writable"),
    ({"gpus_available": False, "gpus_reason": "nvidia-smi not found", "gpus": ()}, False,
     {"GPUs": "skip"}, None),
    ({"holders": (holder(42),)}, False, {"stale GPU": "fail"}, "1 stale process(es)"),
    ({"holders": (holder(42),)}, True, {"stale GPU": "warn"}, None),
    ({"holders": (holder(42, ppid=7),)}, False, {"GPU in use": "warn"}, None),
]  # fmt: skip


@pytest.mark.parametrize(("over", "kill", "levels", "message"), VERDICTS)
def test_preflight_verdicts(
    over: dict[str, object], kill: bool, levels: dict[str, str], message: str | None
) -> None:
    pf = decide(facts(**over), "gpu (root@h:22)", kill_stale=kill)
    got = {v.check: v.level for v in pf.verdicts}
    assert levels.items() <= got.items(), got
    assert pf.verdicts[0] == Verdict(
        "target", "ok", "gpu (root@h:22): Python 3.12.3 at /usr/bin/python3"
    )
    fails = [v for v in pf.verdicts if v.level == "fail"]
    if message is None:
        assert fails == [] and pf.ok
    else:
        assert message in fails[0].message and fails[0].hint and not pf.ok
    assert [h.pid for h in pf.stale] == ([42] if kill and "holders" in over else [])


VIEW = "/w/.harness/runs/r1/verifiers/text_view.py"


@pytest.mark.parametrize(
    ("script", "shipped", "level"),
    [
        (VIEW, {VIEW}, "ok"),
        ("/w/x.py", {VIEW}, "fail"),  # another script, missing
        (VIEW, set(), "fail"),  # not harness's: missing
    ],
)
def test_a_script_harness_writes_at_launch_is_not_missing(
    script: str, shipped: set[str], level: str
) -> None:
    pf = decide(facts(script=script, script_exists=False), "gpu", kill_stale=False,
                shipped=frozenset(shipped))  # fmt: skip
    assert {v.check: v.level for v in pf.verdicts}["command"] == level


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (("py", "/w/.harness/runs/r1/verifiers/text_view.py", "make"), 1),
        (("py", "/w/.harness/runs/r1/verifiers/nosuch.py"), 0),  # not one of harness's checks
        (("py", "/elsewhere/verifiers/text_view.py"), 0),  # outside the run directories
        (("py", "/w/speculators/scripts/train.py"), 0),
    ],
)
def test_shipped_scripts_are_harness_checks_in_the_run_directory(
    argv: tuple[str, ...], want: int
) -> None:
    from harness.runs.target.remote import shipped_scripts

    assert len(shipped_scripts("/w", argv)) == want


TWO = (GpuInfo(0, "NVIDIA H200", 143771, 0, 143771), GpuInfo(1, "NVIDIA H200", 143771, 0, 143771))
TP = [
    # (gpus, tensor-parallel size, CUDA_VISIBLE_DEVICES, level of "tensor-parallel", message)
    (TWO[:1], 2, None, "fail", "tensor-parallel size 2 needs 2 GPUs; the step sees 1 GPU(s) on"),
    (TWO, 2, None, "ok", "size 2 on 2 GPU(s) on the target"),
    (TWO, 2, "1", "fail", "sees 1 GPU(s) visible (CUDA_VISIBLE_DEVICES=1)"),
    (TWO, 2, "0,1", "ok", "size 2 on 2 GPU(s) visible"),
    (TWO, 4, "0,1,2,3", "fail", "needs 4 GPUs; the step sees 2 GPU(s) visible"),
    (TWO, 1, None, None, None),  # nothing to say for TP=1
    ((), 8, None, None, None),  # no GPU seen at all: the GPUs line says so (skip)
]  # fmt: skip


@pytest.mark.parametrize(("gpus", "tp", "visible", "level", "message"), TP)
def test_preflight_refuses_more_tensor_parallel_ranks_than_visible_gpus(
    gpus: tuple, tp: int, visible: str | None, level: str | None, message: str | None
) -> None:
    over: dict[str, object] = {"gpus": gpus, "gpus_available": bool(gpus)}
    pf = decide(facts(**over), "box", kill_stale=False, tensor_parallel=tp, visible=visible)
    got = [v for v in pf.verdicts if v.check == "tensor-parallel"]
    if level is None:
        assert got == []
        return
    (v,) = got
    assert v.level == level and message is not None and message in v.message
    assert pf.ok is (level == "ok")
    if level == "fail":
        assert v.hint is not None and "--set tp=" in v.hint


def test_timings_from_env() -> None:
    t = Timings.from_env({"HARNESS_RUN_POLL_S": "0.01", "HARNESS_RUN_GRACE_S": "1"})
    assert (t.poll, t.stop_grace, t.reconnect) == (0.01, 1.0, Timings().reconnect)
    with pytest.raises(ConfigError, match="HARNESS_RUN_POLL_S"):
        Timings.from_env({"HARNESS_RUN_POLL_S": "soon"})


@pytest.mark.parametrize(
    ("secs", "text"), [(None, "-"), (5, "0:05"), (65, "1:05"), (3723, "1:02:03")]
)
def test_format_duration(secs: float | None, text: str) -> None:
    assert format_duration(secs) == text


def test_models_round_trip() -> None:
    frames = (Frame("/a.py", 1, "f", "x()"),)
    objs = [
        info(RunStatus(exit_code=3, ended_at=5.0), False),
        info(None, True),
        FailureSummary("TypeError", "m", frames, FailureSummary("E", "x"), "hint", ("c",)),
        Phase("loading weights", 29, 64),
        GpuInfo(0, "H100", 1, 2, 3),
        holder(3, run_id="x"),
        Verdict("GPUs", "skip", "none"),
        StopReport(info(RunStatus(signal=15), False), (1, 2), (3,), (), (holder(9),), False),
    ]
    for obj in objs:
        assert type(obj).from_dict(obj.to_dict()) == obj  # type: ignore[attr-defined]


def test_run_info_from_raw_facts_tolerates_missing_files() -> None:
    i = RunInfo.from_facts({"run_dir": "/w/.harness/runs/x", "record": None}, 3.0)
    assert i.record.run_dir == "/w/.harness/runs/x" and i.state == "lost"
    assert RunInfo.from_facts(
        {"record": {"id": "x", "argv": ["a"]}, "stop": {}}, 1.0
    ).stop_requested


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["python", "x.py", "--tensor-parallel-size", "8"], 8),
        (["vllm", "serve", "m", "-tp", "4"], 4),
        (["x", "--tensor-parallel-size=2"], 2),
        (["x", "--tensor-parallel-size"], None),
        (["x", "--tp", "auto"], None),
        (["x"], None),
    ],
)
def test_tensor_parallel(argv: list[str], want: int | None) -> None:
    assert tensor_parallel(argv) == want


def test_a_described_step_as_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.runs.target.describe import StepRequest, describe

    monkeypatch.setenv("HARNESS_WORKDIR", str(tmp_path))
    repo = Path(__file__).resolve().parents[2]
    request = StepRequest("extract", repo / "pipeline.toml", {"tp": "4"})
    d = describe(LocalTarget(), request).to_dict()
    assert d["name"] == "extract" and d["tensor_parallel"] == 4
    assert d["command"][1] == f"{tmp_path}/speculators/scripts/data_generation_offline.py"
    assert d["cwd"] == str(tmp_path) and d["env"]["PYTHONUNBUFFERED"] == "1"
