"""The pure decisions behind ``-t a,b`` / ``-t nodes``: which hosts, what each node runs,
whether the hosts agree, one row per spread run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness.config import HostsConfig
from harness.errors import UsageError
from harness.group.listing import group_runs
from harness.group.sameness import compare
from harness.group.spec import expand
from harness.launch.nodes import Node
from harness.launch.ray import ray_start_argv
from harness.launch.spread import node_builtins, socket_env, torchrun_argv
from harness.models import GpuInfo, TargetFacts
from harness.runs.record.parts import GroupRecord

CFG = HostsConfig(
    Path("hosts.toml"),
    hosts={"gpu1": object(), "gpu2": object(), "gpu3": object()},
    groups={"nodes": ("gpu1", "gpu2"), "all": ("gpu1", "gpu2", "gpu3")},
)


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ("gpu1", None),  # one host: the ordinary single-target path
        ("local", None),
        ("pypi:vllm==0.20.2,torch==2.11.0", None),  # a comma inside a kind's spec
        ("venv:/a,b", None),
        ("nodes", ("gpu1", "gpu2")),
        ("gpu2,gpu1", ("gpu2", "gpu1")),  # the order given is the rank order
        ("nodes,gpu3", ("gpu1", "gpu2", "gpu3")),
        ("gpu1,nodes", ("gpu1", "gpu2")),  # named twice: once
        ("gpu1,gpu1", None),  # ... which leaves one host
        ("gpu1, gpu2,", ("gpu1", "gpu2")),
    ],
)
def test_expand(spec: str, want: tuple[str, ...] | None) -> None:
    assert expand(spec, CFG) == want


def test_expand_default_group_and_typo() -> None:
    assert expand(None, HostsConfig(None, default="nodes", groups=CFG.groups)) == ("gpu1", "gpu2")
    with pytest.raises(UsageError) as got:
        expand("gpu1,gpuu2", CFG)
    assert "'gpuu2' is not a host or group in hosts.toml" in got.value.message
    assert "did you mean 'gpu2'" in (got.value.hint or "")


NODES = [Node("gpu1", 0, "10.0.0.1"), Node("gpu2", 1, "10.0.0.2")]


def test_node_builtins_place_each_node_and_name_the_head() -> None:
    assert node_builtins(NODES, NODES[1]) == {
        "shard": "1", "num_shards": "2", "node_rank": "1", "nnodes": "2", "head": "10.0.0.1",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("node", "program", "tail"),
    [
        (NODES[0], ["/py", "train.py", "--x"], ["--rdzv-conf", "is_host=1", "train.py", "--x"]),
        (NODES[1], ["/py", "train.py"], ["train.py"]),  # only the first hosts the store
        (NODES[1], ["-m", "pkg.train"], ["-m", "pkg.train"]),
    ],
)
def test_torchrun_argv(node: Node, program: list[str], tail: list[str]) -> None:
    argv = torchrun_argv("/py", program, NODES, node, nproc="2", port=29500, run_id="r1")
    assert argv[:3] == ["/py", "-m", "torch.distributed.run"]
    assert argv[argv.index("--node-rank") + 1] == str(node.rank)
    assert argv[argv.index("--rdzv-endpoint") + 1] == "10.0.0.1:29500"
    assert argv[argv.index("--local-addr") + 1] == node.address  # advertises its own address
    assert argv[-len(tail) :] == tail


def test_ray_start_binds_to_inventory_addresses() -> None:
    head = ray_start_argv("/py", NODES, NODES[0], port=6379, run_id="r1")
    worker = ray_start_argv("/py", NODES, NODES[1], port=6379, run_id="r1")
    assert head[head.index("--node-ip-address") + 1] == "10.0.0.1" and "--head" in head
    assert worker[worker.index("--address") + 1] == "10.0.0.1:6379" and "--head" not in worker
    assert head[head.index("--temp-dir") + 1] == worker[worker.index("--temp-dir") + 1]
    assert not head[head.index("--temp-dir") + 1].startswith("/tmp/ray")  # never a hand-run's


@pytest.mark.parametrize(
    ("iface", "env", "want"),
    [
        (None, {"A": "1"}, {"A": "1"}),
        ("eth1", {}, {"GLOO_SOCKET_IFNAME": "eth1", "NCCL_SOCKET_IFNAME": "eth1"}),
        ("eth1", {"NCCL_SOCKET_IFNAME": "ib0"}, {"GLOO_SOCKET_IFNAME": "eth1",
                                                 "NCCL_SOCKET_IFNAME": "ib0"}),  # the step's wins
    ],
)  # fmt: skip
def test_socket_env(iface: str | None, env: dict[str, str], want: dict[str, str]) -> None:
    assert socket_env(iface, env) == want


def _facts(torch: str | None = "2.11.0", gpus: int = 1, py: str = "3.12.3") -> TargetFacts:
    gpu = GpuInfo(0, "H200", 143771, 0, 143771, "580.1")
    dists = {"torch": torch, "nvidia-nccl-cu13": "2.28.9"}
    return TargetFacts("t", {"version": py}, (), dists, (gpu,) * gpus, None)


@pytest.mark.parametrize(
    ("b", "extra", "blockers"),
    [
        (_facts(), None, []),
        (_facts(torch="2.9.1"), None, ["torch differs across hosts: gpu1 2.11.0, gpu2 2.9.1"]),
        (_facts(torch=None), None, ["torch differs across hosts: gpu1 2.11.0, gpu2 absent"]),
        (_facts(gpus=2), None, ["GPUs differs across hosts: gpu1 1, gpu2 2"]),
        (_facts(py="3.11.9"), None, ["python differs across hosts: gpu1 3.12.3, gpu2 3.11.9"]),
        (
            _facts(),
            {"speculators series": {"gpu1": "12/12 applied", "gpu2": "11/12 applied"}},
            ["speculators series differs across hosts: gpu1 12/12 applied, gpu2 11/12 applied"],
        ),
    ],
)
def test_sameness(b: TargetFacts, extra: Any, blockers: list[str]) -> None:
    assert compare({"gpu1": _facts(), "gpu2": b}, extra=extra).blockers == blockers


def test_sameness_leaves_out_what_no_host_has() -> None:
    rows = {r.what for r in compare({"gpu1": _facts(), "gpu2": _facts()}).rows}
    assert "vllm" not in rows and {"torch", "NCCL", "GPUs", "CUDA driver"} <= rows


@dataclass
class _Rec:
    step: str
    wire: dict[str, Any] | None = None  # run.json's group, as written

    @property
    def group(self) -> GroupRecord | None:
        return None if self.wire is None else GroupRecord.from_dict(self.wire)


@dataclass
class _Run:
    id: str
    record: _Rec
    state: str = "succeeded"
    started_at: float = 0.0
    status: Any = None
    supervisor: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def test_group_runs_fold_a_spread_run_into_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.runs.record.lifecycle as lifecycle

    monkeypatch.setattr(lifecycle, "state_label", lambda r: r.state)
    g = {"id": "extract-1", "spread": "ray"}
    listed = {
        "gpu1": [
            _Run("extract-1", _Rec("extract", {**g, "role": "step"}), "failed", 2.0),
            _Run("extract-1-ray0", _Rec("extract-ray", {**g, "role": "ray-head"}), "killed", 1.0),
            _Run("prep-1", _Rec("prepare"), "succeeded", 0.5),
        ],
        "gpu2": [
            _Run("extract-1-ray1", _Rec("extract-ray", {**g, "role": "ray-node"}), "killed", 1.0),
        ],
    }
    rows = group_runs(listed)
    assert [(r.id, r.step, r.spread, r.states, r.state) for r in rows] == [
        ("prep-1", "prepare", None, {"gpu1": "succeeded"}, "succeeded"),
        ("extract-1", "extract", "ray", {"gpu1": "failed"}, "failed"),  # the cluster's are not rows
    ]


@pytest.mark.parametrize(
    ("states", "want"),
    [
        (["succeeded", "succeeded"], "succeeded"),
        (["succeeded", "running"], "running"),  # still going somewhere: running
        (["succeeded", "failed (exit 1)"], "failed"),  # one host failed: the run failed
        (["killed (SIGTERM)", "failed (exit 1)"], "failed"),
        (["succeeded", "queued"], "mixed"),
    ],
)
def test_group_run_state_is_the_worst_host(states: list[str], want: str) -> None:
    from harness.group.listing import GroupRun

    row = GroupRun("r", "s", "shard", {f"h{i}": s for i, s in enumerate(states)}, None)
    assert row.state == want
