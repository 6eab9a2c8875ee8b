"""The Ray cluster a ``spread = "ray"`` step runs on: started by harness, owned by the run.

``ray start --head --block`` on the first host, ``--address`` on the others, each bound to its
inventory address (never 0.0.0.0), each supervised like any run (its processes carry the
run's marker), so stopping it stops exactly that cluster -- a Ray cluster started by hand is
never touched.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from harness.errors import RunError
from harness.group.result import run_each
from harness.launch.events import ClusterStopped, ClusterUp
from harness.runs.record.parts import GroupRecord, Role

if TYPE_CHECKING:
    from harness.launch.nodes import Host, Launch, Node

RAY_PORT = 6379
RAY_WAIT_S = float(os.environ.get("HARNESS_RAY_WAIT_S") or 90)


def ray_temp_dir(run_id: str) -> str:
    """This run's own (never /tmp/ray, where a cluster started by hand keeps its session) and
    short: Ray's socket paths must stay under 107 bytes. Ray gives every node the head's path,
    so it is one path for all."""
    return f"/tmp/harness-ray/{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"


def ray_start_argv(
    python: str, nodes: Sequence[Node], node: Node, *, port: int, run_id: str
) -> list[str]:
    """Pure: ``ray start --block`` for one node, bound to its inventory address."""
    argv = [
        python, "-c", "import sys; from ray.scripts.scripts import main; sys.exit(main())",
        "start", "--block", "--node-ip-address", node.address, "--disable-usage-stats",
        "--temp-dir", ray_temp_dir(run_id),
    ]  # fmt: skip
    if node.rank == 0:
        return [*argv, "--head", "--port", str(port), "--include-dashboard=false"]
    return [*argv, "--address", f"{nodes[0].address}:{port}"]


RAY_READY = """
import sys, time, json
import ray
want, deadline = int(sys.argv[1]), time.monotonic() + float(sys.argv[2])
while True:
    try:
        ray.init(address=sys.argv[3], logging_level="ERROR")
        alive = [n for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        if len(alive) >= want:
            print(json.dumps(sorted(n["NodeManagerAddress"] for n in alive)))
            sys.exit(0)
    except Exception as exc:  # not up yet
        err = exc
    if time.monotonic() > deadline:
        sys.stderr.write("the Ray cluster did not gather its nodes in time\\n")
        sys.exit(3)
    time.sleep(0.5)
"""


def start_ray(hosts: Sequence[Host], launch: Launch) -> None:
    """One supervised ``ray start --block`` per host (head first), then wait for all nodes;
    each run started goes into ``launch.cluster`` as it starts."""
    from harness.runs.target import remote

    nodes, port, run_id = launch.nodes, launch.port or RAY_PORT, launch.run_id
    group = launch.group or GroupRecord(run_id)
    for h in hosts:
        python = h.target.python_argv()[0]
        argv = ray_start_argv(python, nodes, h.node, port=port, run_id=run_id)
        cid = f"{run_id}-ray{h.node.rank}"
        role = Role.RAY_NODE if h.node.rank else Role.RAY_HEAD
        assert h.resolved is not None
        resolved = replace(
            h.resolved,
            step=f"{h.resolved.step}-ray",
            argv=tuple(argv),
            shell=False,
            env={**h.resolved.env, "RAY_USAGE_STATS_ENABLED": "0"},
        )
        remote.launch(
            h.target,
            cid,
            h.workdir,
            resolved,
            pipeline=launch.pipeline,
            timings=h.ctx.timings,
            extras=remote.RunExtras(group=replace(group, rank=h.node.rank, role=role)),
        )
        launch.cluster.append(cid)
        if h.node.rank == 0:  # the workers join the head: it must listen first
            _wait_port(h, port)
    head = hosts[0]
    t0 = time.monotonic()
    got = head.target.run(
        [
            head.target.python_argv()[0],
            "-c",
            RAY_READY,
            str(len(nodes)),
            str(RAY_WAIT_S),
            f"{nodes[0].address}:{port}",
        ],
        timeout=RAY_WAIT_S + 30,
    )
    if not got.ok:
        raise RunError(
            f"the Ray cluster of {run_id} did not come up: {got.stderr.decode().strip()[-300:]}",
            f"harness logs {run_id}-ray0 -t {head.node.host} shows the head's log",
        )
    launch.on_event(ClusterUp(time.monotonic() - t0, got.stdout.decode().strip()))
    if launch.group is not None:
        launch.group = replace(launch.group, cluster=tuple(launch.cluster))


def _wait_port(h: Host, port: int, timeout: float = 60.0) -> None:
    code = (
        "import socket, sys, time\n"
        "end = time.monotonic() + float(sys.argv[3])\n"
        "while time.monotonic() < end:\n"
        "    try:\n"
        "        socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()\n"
        "        sys.exit(0)\n"
        "    except OSError:\n"
        "        time.sleep(0.2)\n"
        "sys.exit(1)\n"
    )
    argv = [h.target.python_argv()[0], "-c", code, h.node.address, str(port), str(timeout)]
    got = h.target.run(argv, timeout=timeout + 10)
    if not got.ok:
        raise RunError(f"the Ray head on {h.node.host} did not listen on {h.node.address}:{port}")


def stop_cluster(hosts: Sequence[Host], cluster: Sequence[str], launch: Launch) -> None:
    """Stop exactly the Ray processes this run started (by the run's marker, tree and all)."""
    from harness.runs.target import remote

    t0 = time.monotonic()
    started = {cid.rsplit("-ray", 1)[-1]: cid for cid in cluster}

    def one(name: str) -> Any:
        h = next(h for h in hosts if h.node.host == name)
        with h.ctx.open() as t:
            return remote.stop(
                t,
                h.workdir,
                started[str(h.node.rank)],
                grace=h.ctx.timings.stop_grace,
                timings=h.ctx.timings,
            )

    got = run_each([h.node.host for h in hosts if str(h.node.rank) in started], one)
    launch.on_event(ClusterStopped(time.monotonic() - t0, tuple(r.host for r in got.failed)))
