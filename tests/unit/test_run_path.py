"""The one ``harness run`` path, its pure parts: what each spread adds, when it refuses, and
how a command's output stays each host's own when it runs across hosts in one process."""

from __future__ import annotations

import sys
import threading
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest

from harness.cli.hostio import Captured, Prefixed, on_each, routed
from harness.errors import UsageError
from harness.launch.gates import preflight_refusal
from harness.launch.nodes import Node
from harness.launch.spread import SINGLE, SPREADS, node_builtins
from harness.launch.start import spread_for
from harness.runs.pipeline.file import load_pipeline
from harness.runs.pipeline.steps import Step
from harness.runs.record.models import Level, Verdict

NODES = [Node("gpu1", 0, "10.0.0.1"), Node("gpu2", 1, "10.0.0.2"), Node("gpu3", 2, "10.0.0.3")]


@pytest.mark.parametrize(
    ("spread", "port", "want_port", "builtins", "step_hosts", "same_stack"),
    [
        (SINGLE, None, None, None, ["gpu1", "gpu2", "gpu3"], False),
        (SPREADS["shard"], None, None, node_builtins(NODES, NODES[1]), ["gpu1", "gpu2", "gpu3"],
         False),
        (SPREADS["torchrun"], None, 29500, node_builtins(NODES, NODES[1]),
         ["gpu1", "gpu2", "gpu3"], True),
        (SPREADS["torchrun"], 29600, 29600, node_builtins(NODES, NODES[1]),
         ["gpu1", "gpu2", "gpu3"], True),
        (SPREADS["ray"], None, 6379, node_builtins(NODES, NODES[1]), ["gpu1"], True),
        (SPREADS["ray"], 6391, 6391, node_builtins(NODES, NODES[1]), ["gpu1"], True),
    ],
)  # fmt: skip
def test_each_spread_adds_only_what_differs(
    spread: Any, port: int | None, want_port: int | None, builtins: Any, step_hosts: list[str],
    same_stack: bool,
) -> None:  # fmt: skip
    from harness.launch.nodes import Host

    step = Step("s", ("x",), spread=spread.name, port=port)
    hosts = [Host(n, None, "/w", None) for n in NODES]
    assert spread.port(step) == want_port
    assert spread.builtins(NODES, NODES[1]) == builtins
    assert [h.node.host for h in spread.step_hosts(hosts)] == step_hosts
    assert spread.same_stack is same_stack


def test_ray_points_the_step_at_its_own_cluster() -> None:
    from harness.runs.pipeline.steps import ResolvedStep

    r = ResolvedStep("s", ("x",), "/w", {"A": "1"}, {})
    env = SPREADS["ray"].step_env(r, NODES, 6391).env
    assert env == {"A": "1", "RAY_ADDRESS": "10.0.0.1:6391", "RAY_USAGE_STATS_ENABLED": "0"}
    assert SINGLE.step_env(r, NODES, 6391) is r


def _v(check: str, level: Level, hint: str | None = None) -> Verdict:
    return Verdict(check, level, "...", hint)


@pytest.mark.parametrize(
    ("verdicts", "several", "message", "hint"),
    [
        ({"a": [_v("gpu", Level.OK)]}, False, None, None),
        ({"a": [_v("gpu", Level.FAIL, "free it"), _v("disk", Level.FAIL)]}, False,
         "preflight refused to launch s: gpu, disk", "free it"),
        ({"a": [_v("gpu", Level.OK)], "b": [_v("gpu", Level.OK)]}, True, None, None),
        ({"a": [_v("gpu", Level.OK)], "b": [_v("gpu", Level.FAIL, "free it")]}, True,
         "preflight refused to launch s on b",
         "fix what the lines above say on each host, then run again"),
    ],
)  # fmt: skip
def test_preflight_refusal(
    verdicts: dict[str, list[Verdict]], several: bool, message: str | None, hint: str | None
) -> None:
    got = preflight_refusal("s", verdicts, several)
    assert (got and got.message, got and got.hint) == (message, hint)


def test_one_host_runs_as_written_several_as_the_step_spreads(tmp_path: Path) -> None:
    f = tmp_path / "pipeline.toml"
    f.write_text('[steps.one]\ncommand = ["x"]\n[steps.many]\ncommand = ["x"]\nspread = "ray"\n')
    pipeline = load_pipeline(f)
    assert spread_for(pipeline, "many", ["gpu1"]) is SINGLE
    assert spread_for(pipeline, "many", ["gpu1", "gpu2"]) is SPREADS["ray"]
    with pytest.raises(UsageError) as got:
        spread_for(pipeline, "one", ["gpu1", "gpu2"])
    assert "step 'one' runs on one host; -t names 2 (gpu1, gpu2)" in got.value.message


def test_each_host_writes_to_its_own_output_in_one_process() -> None:
    sinks = {h: Captured() for h in ("a", "b")}

    def body(host: str) -> str:
        print(f"hello from {host}")
        sys.stdout.buffer.write(f"bytes {host}\n".encode())
        sys.stderr.write(f"err {host}\n")
        return host.upper()

    with routed():
        assert on_each(["a", "b"], body, sinks.__getitem__) == ["A", "B"]
    assert [sinks[h].out for h in "ab"] == ["hello from a\nbytes a\n", "hello from b\nbytes b\n"]
    assert [sinks[h].err for h in "ab"] == ["err a\n", "err b\n"]


def test_prefixed_output_is_whole_lines_with_the_host_in_front() -> None:
    real, lock = BytesIO(), threading.Lock()
    sinks = {h: Prefixed(h, real, lock) for h in ("a", "b")}

    def body(host: str) -> None:
        sys.stdout.write("one\ntw")
        sys.stderr.write("o\n")
        sys.stdout.buffer.write(b"end")  # no newline: ended by on_each

    with routed():
        on_each(["a", "b"], body, sinks.__getitem__)
    lines = real.getvalue().decode().splitlines()
    assert sorted(lines) == sorted(["[a] one", "[a] two", "[a] end", "[b] one", "[b] two",
                                    "[b] end"])  # fmt: skip
    assert [x for x in lines if x.startswith("[a]")] == ["[a] one", "[a] two", "[a] end"]


def test_an_error_in_a_host_body_is_raised_in_the_caller() -> None:
    def body(host: str) -> None:
        raise ValueError(host)

    with routed(), pytest.raises(ValueError):
        on_each(["a"], body, lambda h: Captured())


def test_a_muted_host_writes_nothing_more() -> None:
    real, lock = BytesIO(), threading.Lock()
    sink = Prefixed("a", real, lock)
    with routed():
        on_each(["a"], lambda h: sys.stdout.write("before\n"), lambda h: sink)
        sink.mute()
        on_each(["a"], lambda h: sys.stdout.write("after\nend"), lambda h: sink)
    assert real.getvalue() == b"[a] before\n"


def test_the_run_path_is_typed() -> None:
    """Issue 33 part 2: what the launch passes between its parts is typed, not ``Any``: a
    renamed attribute of a target, context or spread is a type error, not a crash mid-run."""
    import inspect
    from typing import get_type_hints

    from harness.launch import events
    from harness.launch.nodes import Host, Launch
    from harness.launch.spread import Spread
    from harness.report.model import Review
    from harness.runs.record.parts import GroupRecord
    from harness.runs.target import remote
    from harness.runs.target.context import Context
    from harness.targets.base import Target

    host = get_type_hints(Host, localns={"Review": Review})
    launch = get_type_hints(Launch, localns=vars(events))
    assert (host["target"], host["ctx"], launch["spread"]) == (Target, Context, Spread)
    params = inspect.signature(remote.launch).parameters
    assert get_type_hints(remote.launch)["extras"] is remote.RunExtras
    assert not {"review", "smoke", "hook", "group", "fingerprint"} & set(params)
    # issue 45 item 1: the record's parts travel typed, serialised only where it is written
    assert host["review"] == Review | None and launch["group"] == GroupRecord | None
    extras = get_type_hints(remote.RunExtras)
    assert not [n for n, t in extras.items() if "Any" in str(t) and n != "hook"], extras
