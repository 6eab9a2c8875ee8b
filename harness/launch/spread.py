"""How a step spreads over its hosts: one :class:`Spread` per kind, the hooks a launch needs.

``spread`` in pipeline.toml says how, and harness only starts the engines -- it schedules
nothing itself:

* one host (:data:`SINGLE`): the step as written, node 0 of 1;
* ``"shard"``: one independent run per host; ``{shard}``/``{num_shards}`` in the command pick
  its part (a big dataset's extraction), outputs stay on each host;
* ``"torchrun"``: one job over all hosts -- ``python -m torch.distributed.run --nnodes N
  --node-rank R --rdzv-backend c10d --rdzv-endpoint FIRST:PORT`` on each host (the first hosts
  the rendezvous store, every node advertises its inventory address);
* ``"ray"``: harness starts a Ray cluster it owns (:mod:`harness.launch.ray`), runs the step on
  the head with ``RAY_ADDRESS``, and stops exactly that cluster afterwards.

:func:`harness.launch.start.start_run` is the one launch; a kind adds only what differs, here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from harness.launch.nodes import Host, Launch, Node, Spread
from harness.runs.pipeline.steps import ResolvedStep, Step

TORCHRUN_PORT = 29500


def node_builtins(nodes: Sequence[Node], node: Node) -> dict[str, str]:
    """Pure: the built-ins of one node's command."""
    n = str(len(nodes))
    return {
        "shard": str(node.rank),
        "num_shards": n,
        "node_rank": str(node.rank),
        "nnodes": n,
        "head": nodes[0].address,
    }


def torchrun_argv(
    python: str,
    program: Sequence[str],
    nodes: Sequence[Node],
    node: Node,
    *,
    nproc: str,
    port: int,
    run_id: str,
) -> list[str]:
    """Pure: torchrun over the nodes with c10d rendezvous at the first node.

    ``--local-addr`` makes each agent advertise its inventory address (the host name may
    resolve to an address the others cannot reach); ``is_host`` makes the first node serve
    the store even when its name does not resolve to that address.
    """
    argv = [
        python, "-m", "torch.distributed.run",
        "--nnodes", str(len(nodes)), "--node-rank", str(node.rank),
        "--nproc-per-node", nproc,
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{nodes[0].address}:{port}",
        "--rdzv-id", run_id, "--local-addr", node.address,
    ]  # fmt: skip
    if node.rank == 0:
        argv += ["--rdzv-conf", "is_host=1"]
    prog = list(program)
    if prog and prog[0] == python:  # the command names the script; torchrun runs Python
        prog = prog[1:]
    return [*argv, *prog]


#: the interface holding an address, found on the node itself (stdlib: SIOCGIFADDR per interface)
IFACE_OF = """
import fcntl, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _, name in socket.if_nameindex():
    try:
        raw = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
    except OSError:
        continue
    if socket.inet_ntoa(raw[20:24]) == sys.argv[1]:
        print(name)
        break
"""


def socket_env(iface: str | None, env: dict[str, str]) -> dict[str, str]:
    """Pure: Gloo and NCCL on the interface of the node's inventory address, unless the step
    says otherwise -- they bind to what the host name resolves to, which may be loopback."""
    if not iface:
        return env
    out = dict(env)
    for var in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        out.setdefault(var, iface)
    return out


def substitute(text: str, params: Mapping[str, str]) -> str:
    """Pure: ``{name}`` in ``text`` from ``params`` (unknown names left as written)."""
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m[1], m[0])), text)


class Shard(Spread):
    name = "shard"

    def builtins(self, nodes: Sequence[Node], node: Node) -> dict[str, str] | None:
        return node_builtins(nodes, node)


class Torchrun(Shard):
    name = "torchrun"
    same_stack = True

    def port(self, spec: Step) -> int | None:
        return spec.port or TORCHRUN_PORT

    def prepare(
        self,
        h: Host,
        resolved: ResolvedStep,
        nodes: Sequence[Node],
        spec: Step,
        port: int,
        run_id: str,
    ) -> ResolvedStep:
        python = h.target.python_argv()[0]
        argv = torchrun_argv(
            python,
            resolved.argv,
            nodes,
            h.node,
            nproc=substitute(spec.nproc, resolved.params),
            port=port,
            run_id=run_id,
        )
        return replace(resolved, argv=tuple(argv), env=socket_env(_iface(h), dict(resolved.env)))


class Ray(Shard):
    name = "ray"
    same_stack = True

    def port(self, spec: Step) -> int | None:
        from harness.launch.ray import RAY_PORT

        return spec.port or RAY_PORT

    def before(self, hosts: Sequence[Host], launch: Launch) -> None:
        from harness.launch.ray import start_ray

        start_ray(hosts, launch)

    def step_hosts(self, hosts: Sequence[Host]) -> list[Host]:
        return list(hosts[:1])

    def step_env(self, resolved: ResolvedStep, nodes: Sequence[Node], port: int) -> ResolvedStep:
        env = {
            **resolved.env,
            "RAY_ADDRESS": f"{nodes[0].address}:{port}",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        return replace(resolved, env=env)

    def after(self, hosts: Sequence[Host], cluster: Sequence[str], launch: Launch) -> None:
        from harness.launch.ray import stop_cluster

        stop_cluster(hosts, cluster, launch)


SINGLE = Spread()
#: pipeline.toml's ``spread`` -> its strategy
SPREADS: dict[str, Spread] = {s.name: s for s in (Shard(), Torchrun(), Ray()) if s.name}


def _iface(h: Host) -> str | None:
    got = h.target.run([h.target.python_argv()[0], "-c", IFACE_OF, h.node.address], timeout=30)
    return (got.stdout.decode().strip() or None) if got.ok else None


__all__ = ["SINGLE", "SPREADS", "Spread", "node_builtins", "socket_env", "torchrun_argv"]
