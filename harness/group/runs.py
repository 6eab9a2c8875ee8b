"""Runs that span hosts: one step on every host of a group, the way its engine wants it.

``spread`` in pipeline.toml says how, and harness only starts the engines -- it schedules
nothing itself:

* ``"shard"``: one independent run per host; ``{shard}``/``{num_shards}`` in the command pick
  its part (a big dataset's extraction), outputs stay on each host;
* ``"torchrun"``: one job over all hosts -- ``python -m torch.distributed.run --nnodes N
  --node-rank R --rdzv-backend c10d --rdzv-endpoint FIRST:PORT`` on each host (the first hosts
  the rendezvous store, every node advertises its inventory address);
* ``"ray"``: harness starts a Ray cluster it owns (:mod:`harness.group.ray`), runs the step on
  the head with ``RAY_ADDRESS``, and stops exactly that cluster afterwards.

Every host is reviewed and preflighted before anything launches; the logs come back
interleaved with a host prefix while each host's local copy stays byte-exact; the run fails
if any host fails, naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.errors import NotReady, RunError, UsageError
from harness.group.nodes import Host, Node
from harness.group.result import GroupResult, run_each

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
    python: str, program: Sequence[str], nodes: Sequence[Node], node: Node, *,
    nproc: str, port: int, run_id: str,
) -> list[str]:  # fmt: skip
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


def run_across(
    hosts_cfg: Any,
    names: tuple[str, ...],
    step: str,
    *,
    make_ctx: Callable[[str], Any],
    pipeline_file: Path | None,
    sets: Sequence[str],
    extra: Sequence[str],
    detach: bool,
    kill_stale: bool,
    force: bool,
    patches: Path | None,
    follow: Callable[[Sequence[str], str], int],
) -> int:
    """``harness run STEP -t nodes``: review and preflight everywhere, launch, follow."""
    from harness.group.ray import RAY_PORT, start_ray, stop_cluster
    from harness.runs import remote
    from harness.runs.context import workdir_for
    from harness.runs.describe import resolve_on
    from harness.runs.launch import gate_review, preflight_verdicts
    from harness.runs.pipeline import find_pipeline_file, load_pipeline
    from harness.runs.resolve import parse_sets
    from harness.runs.state import new_run_id
    from harness.views import runs as view
    from harness.views.fold import cut_command

    err = view.console(stderr=True)
    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    spec = pipeline.steps.get(step)
    if spec is None:
        from harness.runs.resolve import resolve_step

        resolve_step(pipeline, step, {}, {})  # the usual "no step" message
        raise AssertionError("unreachable")
    if spec.spread is None:
        raise UsageError(
            f"{pipeline.where('steps', step)}: step {step!r} runs on one host; -t names "
            f"{len(names)} ({', '.join(names)})",
            'say how it spreads over hosts: spread = "shard", "torchrun" or "ray"',
        )
    overrides = parse_sets(sets)
    nodes = [Node(h, i, hosts_cfg.hosts[h].address) for i, h in enumerate(names)]
    run_id = new_run_id(step)
    port = spec.port or (RAY_PORT if spec.spread == "ray" else TORCHRUN_PORT)

    def open_host(node: Node) -> Host:
        ctx = make_ctx(node.host)
        target = ctx.open().__enter__()
        wd = workdir_for(target, ctx.workdir, absolute=True)
        assert wd is not None
        return Host(node, target, wd, ctx)

    opened = run_each([n.host for n in nodes], lambda h: open_host(nodes[names.index(h)]))
    _refuse_failed(opened, "connect")
    hosts = [r.unwrap() for r in opened.results]
    group: dict[str, Any] = {"id": run_id, "spread": spec.spread, "hosts": list(names)}
    cluster: list[str] = []
    try:
        for h in hosts:
            node = node_builtins(nodes, h.node)
            r = resolve_on(h.target, pipeline, step, h.workdir, run_id, overrides, extra, node=node)
            if spec.spread == "torchrun":
                nproc = _substitute(spec.nproc, r.params)
                argv = torchrun_argv(
                    h.target.python_argv()[0], r.argv, nodes, h.node, nproc=nproc, port=port,
                    run_id=run_id,
                )  # fmt: skip
                r = replace(r, argv=tuple(argv), env=socket_env(_iface(h), dict(r.env)))
            h.resolved = r
        for h in hosts:
            err.print(
                f"[bold]{view.esc(step)}[/] on {view.esc(h.node.host)} (node {h.node.rank}): ",
                end="",
            )
            shown = cut_command(h.resolved.display()) if h.resolved else ""
            err.print(shown, markup=False, soft_wrap=True)
        # the review on every host, and whether they agree (torchrun/Ray need the same stack)
        reviewed = run_each([h.node.host for h in hosts], lambda name: gate_review(
            _by(hosts, name).target, step, pipeline_file, overrides, patches))  # fmt: skip
        _refuse_failed(reviewed, "review")
        _gate_all(err, hosts, reviewed, spec.spread, force)

        def preflight(name: str) -> Any:
            h = _by(hosts, name)
            assert h.resolved is not None
            return preflight_verdicts(h.ctx, h.target, h.workdir, h.resolved, kill_stale)

        checked = run_each([h.node.host for h in hosts], preflight)
        _refuse_failed(checked, "preflight")
        for c in checked.results:
            view.verdicts(err, c.unwrap().verdicts, prefix=f"{c.host}: ")
        failed = [c.host for c in checked.results if not c.unwrap().ok]
        if failed:
            raise RunError(
                f"preflight refused to launch {step} on " + ", ".join(failed),
                "fix what the lines above say on each host, then run again",
            )
        if spec.spread == "ray":
            cluster = start_ray(err, hosts, nodes, port, run_id, group, pipeline.path)
            group["cluster"] = cluster
        targets = hosts if spec.spread != "ray" else hosts[:1]
        for h in targets:
            assert h.resolved is not None
            resolved = h.resolved
            if spec.spread == "ray":
                env = {**resolved.env, "RAY_ADDRESS": f"{nodes[0].address}:{port}",
                       "RAY_USAGE_STATS_ENABLED": "0"}  # fmt: skip
                resolved = replace(resolved, env=env)
            remote.launch(
                h.target, run_id, h.workdir, resolved, pipeline=pipeline.path,
                timings=h.ctx.timings, review=h.review,
                kill_first=checked[h.node.host].unwrap().stale,  # --kill-stale's, if asked
                group={**group, "rank": h.node.rank, "role": "step"},
            )  # fmt: skip
        err.print(f"started [bold]{run_id}[/] on {', '.join(h.node.host for h in targets)}")
    except BaseException:
        if spec.spread == "ray" and "cluster" in group:
            stop_cluster(make_ctx, hosts, cluster, err)  # never leave a cluster behind
        raise
    finally:
        for h in hosts:
            h.target.__exit__(None, None, None)
    if detach:
        err.print(f"follow it with: harness logs {run_id} -t {','.join(names)} --follow")
        return 0
    followed = [h.node.host for h in (hosts if spec.spread != "ray" else hosts[:1])]
    code = follow(followed, run_id)
    if spec.spread == "ray":
        stop_cluster(make_ctx, hosts, cluster, err)
    return code


def _iface(h: Host) -> str | None:
    got = h.target.run([h.target.python_argv()[0], "-c", IFACE_OF, h.node.address], timeout=30)
    return (got.stdout.decode().strip() or None) if got.ok else None


def _by(hosts: Sequence[Host], name: str) -> Host:
    return next(h for h in hosts if h.node.host == name)


def _substitute(text: str, params: dict[str, str] | Any) -> str:
    import re

    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m[1], m[0])), text)


def _refuse_failed(got: GroupResult[Any], what: str) -> None:
    if got.failed:
        first = got.failed[0]
        raise RunError(
            f"{what} failed on " + "; ".join(f"{r.host}: {r.error}" for r in got.failed),
            first.hint or "nothing was launched on any host",
        )


def _gate_all(
    err: Any, hosts: Sequence[Host], reviewed: GroupResult[Any], spread: str, force: bool
) -> None:
    """Every host ready, and (for one job over all hosts) the same where it matters."""
    from harness.group.review import GroupReview, series_state
    from harness.group.sameness import compare
    from harness.views.reading import sameness_table
    from harness.views.review import terminal

    reviews = {r.host: r.unwrap() for r in reviewed.results}
    for h in hosts:
        h.review = reviews[h.node.host].to_dict()
        terminal(err, reviews[h.node.host], brief=True)
    same = None
    if spread in ("torchrun", "ray"):
        facts = {n: r.facts for n, r in reviews.items() if r.facts is not None}
        extra: dict[str, dict[str, str | None]] = {}
        for n, r in reviews.items():
            for what, value in series_state(r).items():
                extra.setdefault(what, {})[n] = value
        same = compare(facts, extra=extra)
        sameness_table(err, same)
    blockers = GroupReview(reviewed, same).blockers
    if blockers and not force:
        raise NotReady(
            "not launching on any host: " + "; ".join(blockers),
            "read it with `harness report STEP -t HOSTS`; fix the blockers, or pass --force",
        )
    if blockers:
        err.print("[yellow]launching anyway (--force)[/]")
