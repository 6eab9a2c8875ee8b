"""Runs that span hosts: one step on every host of a group, the way its engine wants it.

``spread`` in pipeline.toml says how, and harness only starts the engines -- it schedules
nothing itself:

* ``"shard"``: one independent run per host; ``{shard}``/``{num_shards}`` in the command pick
  its part (a big dataset's extraction), outputs stay on each host;
* ``"torchrun"``: one job over all hosts -- ``python -m torch.distributed.run --nnodes N
  --node-rank R --rdzv-backend c10d --rdzv-endpoint FIRST:PORT`` on each host (the first hosts
  the rendezvous store, every node advertises its inventory address);
* ``"ray"``: harness starts a Ray cluster it owns (``ray start --head --block`` on the first
  host, ``--address`` on the others, bound to the inventory's addresses -- never 0.0.0.0), runs
  the step on the head with ``RAY_ADDRESS``, and stops exactly that cluster afterwards: its
  processes carry the run's marker, so a Ray cluster started by hand is never touched.

Every host is reviewed and preflighted before anything launches; the logs come back
interleaved with a host prefix while each host's local copy stays byte-exact; the run fails
if any host fails, naming it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.errors import NotReady, RunError, UsageError
from harness.group.result import GroupResult, run_each
from harness.runs.pipeline import ResolvedStep

TORCHRUN_PORT = 29500
RAY_PORT = 6379
RAY_WAIT_S = float(os.environ.get("HARNESS_RAY_WAIT_S") or 90)


@dataclass(frozen=True)
class Node:
    host: str
    rank: int
    address: str  # the inventory's address: what the other nodes reach this one at


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


@dataclass
class Host:
    """One node's open target and what harness worked out for it."""

    node: Node
    target: Any
    workdir: str
    ctx: Any
    resolved: ResolvedStep | None = None
    review: dict[str, Any] | None = None


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
    hosts_file: Path | None,
) -> int:
    """``harness run STEP -t nodes``: review and preflight everywhere, launch, follow."""
    from harness.runs import remote, view
    from harness.runs.context import workdir_for
    from harness.runs.launch import _preflight_facts, _resolve, _review
    from harness.runs.pipeline import find_pipeline_file, load_pipeline, parse_sets
    from harness.runs.state import new_run_id

    err = view.console(stderr=True)
    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    spec = pipeline.steps.get(step)
    if spec is None:
        from harness.runs.pipeline import resolve_step

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
            r = _resolve(h.target, pipeline, step, h.workdir, run_id, overrides, extra, node=node)
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
            err.print(h.resolved.display() if h.resolved else "", markup=False, soft_wrap=True)
        # the review on every host, and whether they agree (torchrun/Ray need the same stack)
        reviewed = run_each([h.node.host for h in hosts], lambda name: _review(
            _by(hosts, name).target, step, pipeline_file, overrides, patches))  # fmt: skip
        _refuse_failed(reviewed, "review")
        _gate_all(err, hosts, reviewed, spec.spread, force)

        def preflight(name: str) -> Any:
            h = _by(hosts, name)
            assert h.resolved is not None
            return _preflight_facts(h.ctx, h.target, h.workdir, h.resolved, kill_stale)

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
            cluster = _start_ray(err, hosts, nodes, port, run_id, group, pipeline.path)
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
    code = follow_across(followed, run_id, hosts_file, err)
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
    from harness.models import TargetFacts
    from harness.render import sameness_table
    from harness.report.render import terminal

    reviews = {r.host: r.unwrap() for r in reviewed.results}
    for h in hosts:
        h.review = reviews[h.node.host].to_dict()
        terminal(err, reviews[h.node.host], brief=True)
    same = None
    if spread in ("torchrun", "ray"):
        facts = {n: TargetFacts.from_dict(r.facts or {}) for n, r in reviews.items()}
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


def _start_ray(
    err: Any, hosts: Sequence[Host], nodes: Sequence[Node], port: int, run_id: str,
    group: dict[str, Any], pipeline: str,
) -> list[str]:  # fmt: skip
    """One supervised ``ray start --block`` per host (head first), then wait for all nodes."""
    from harness.runs import remote

    cluster = []
    for h in hosts:
        python = h.target.python_argv()[0]
        argv = ray_start_argv(python, nodes, h.node, port=port, run_id=run_id)
        cid = f"{run_id}-ray{h.node.rank}"
        assert h.resolved is not None
        resolved = replace(
            h.resolved, step=f"{h.resolved.step}-ray", argv=tuple(argv), shell=False,
            env={**h.resolved.env, "RAY_USAGE_STATS_ENABLED": "0"},
        )  # fmt: skip
        remote.launch(
            h.target, cid, h.workdir, resolved, pipeline=pipeline, timings=h.ctx.timings,
            group={**group, "rank": h.node.rank, "role": "ray-head" if h.node.rank == 0
                   else "ray-node"},
        )  # fmt: skip
        cluster.append(cid)
        if h.node.rank == 0:  # the workers join the head: it must listen first
            _wait_port(h, port)
    head = hosts[0]
    t0 = time.monotonic()
    got = head.target.run(
        [head.target.python_argv()[0], "-c", RAY_READY, str(len(nodes)), str(RAY_WAIT_S),
         f"{nodes[0].address}:{port}"], timeout=RAY_WAIT_S + 30,
    )  # fmt: skip
    if not got.ok:
        raise RunError(
            f"the Ray cluster of {run_id} did not come up: {got.stderr.decode().strip()[-300:]}",
            f"harness logs {run_id}-ray0 -t {head.node.host} shows the head's log",
        )
    err.print(f"Ray cluster up in {time.monotonic() - t0:.1f} s: {got.stdout.decode().strip()}")
    return cluster


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
    got = h.target.run(argv,
                       timeout=timeout + 10)  # fmt: skip
    if not got.ok:
        raise RunError(f"the Ray head on {h.node.host} did not listen on {h.node.address}:{port}")


def stop_cluster(
    make_ctx: Callable[[str], Any], hosts: Sequence[Host], cluster: Sequence[str], err: Any
) -> None:
    """Stop exactly the Ray processes this run started (by the run's marker, tree and all)."""
    from harness.runs import remote

    t0 = time.monotonic()

    def one(name: str) -> Any:
        h = _by(hosts, name)
        ctx = make_ctx(name)
        with ctx.open() as t:
            return remote.stop(t, h.workdir, cluster[h.node.rank], grace=ctx.timings.stop_grace,
                               timings=ctx.timings)  # fmt: skip

    got = run_each([h.node.host for h in hosts], one)
    left = [r.host for r in got.failed]
    err.print(
        f"Ray cluster stopped in {time.monotonic() - t0:.1f} s"
        + (f"; could not stop it on {', '.join(left)}" if left else "")
    )


def follow_across(
    names: Sequence[str], run_id: str, hosts_file: Path | None, err: Any, follow: bool = True,
    extra: Sequence[str] = (),
) -> int:  # fmt: skip
    """Each host's log, line by line with a ``[host]`` prefix (each local copy byte-exact:
    every follower is a ``harness logs`` of its own); exit code of the worst host."""
    lock = threading.Lock()
    codes: dict[str, int] = {}
    base = [sys.executable, "-m", "harness"] + (["--hosts", str(hosts_file)] if hosts_file else [])

    def follow_one(name: str) -> None:
        proc = subprocess.Popen(
            [*base, "logs", run_id, *(["--follow"] if follow else []), *extra, "-t", name],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env={**os.environ, "HARNESS_NO_FANOUT": "1"},
        )  # fmt: skip
        assert proc.stdout is not None
        for raw in proc.stdout:
            with lock:
                sys.stdout.buffer.write(f"[{name}] ".encode() + raw)
                sys.stdout.buffer.flush()
        codes[name] = proc.wait()

    threads = [threading.Thread(target=follow_one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        err.print(
            f"\ndetached: {run_id} keeps running; "
            f"harness logs {run_id} -t {','.join(names)} --follow"
        )
        return 130
    bad = {n: c for n, c in codes.items() if c != 0}
    if not follow:
        return max(bad.values(), default=0)
    if bad:
        err.print(
            f"[red]✗ {run_id} failed on "
            + ", ".join(f"{n} (exit {c})" for n, c in bad.items())
            + "[/]"
        )
        return max(bad.values())
    err.print(f"[green]✓ {run_id} succeeded on {', '.join(names)}[/]")
    return 0


def _listing(make_ctx: Callable[[str], Any], names: Sequence[str]) -> GroupResult[Any]:
    from harness.runs import remote
    from harness.runs.context import workdir_for

    def one(name: str) -> Any:
        ctx = make_ctx(name)
        with ctx.open() as t:
            return remote.list_runs(t, workdir_for(t, ctx.workdir, absolute=False)).runs

    return run_each(list(names), one)


@dataclass(frozen=True)
class GroupRun:
    """One run as the group sees it: its id, step, and each host's state."""

    id: str
    step: str
    spread: str | None
    states: dict[str, str]  # host -> state label
    started: float | None

    @property
    def state(self) -> str:
        seen = set(self.states.values())
        if len(seen) == 1:
            return next(iter(seen))
        for worst in ("running", "failed", "killed", "lost"):
            if any(v.startswith(worst) for v in seen):
                return worst
        return "mixed"


def group_runs(listed: dict[str, Sequence[Any]]) -> list[GroupRun]:
    """Pure: runs per host -> one row per run id (a spread run's hosts folded into one row;
    the Ray cluster's own runs are part of their step's row, not rows of their own)."""
    from harness.runs.state import state_label

    rows: dict[str, GroupRun] = {}
    for host, runs in listed.items():
        for r in runs:
            group = r.record.group or {}
            if str(group.get("role", "")).startswith("ray"):
                continue
            rid = group.get("id") or r.id
            row = rows.get(rid) or GroupRun(rid, r.record.step, group.get("spread"), {},
                                            r.started_at)  # fmt: skip
            row.states[host] = state_label(r)
            rows[rid] = row
    return sorted(rows.values(), key=lambda g: (g.started or 0.0, g.id))


def list_across(make_ctx: Callable[[str], Any], names: Sequence[str], as_json: bool) -> int:
    import json

    from harness.runs import view

    got = _listing(make_ctx, names)
    rows = group_runs({r.host: r.unwrap() for r in got.succeeded})
    if as_json:
        sys.stdout.write(
            json.dumps(
                [
                    {
                        "id": g.id,
                        "step": g.step,
                        "spread": g.spread,
                        "state": g.state,
                        "hosts": g.states,
                        "started_at": g.started,
                    }
                    for g in rows
                ],
                indent=2,
            )
            + "\n"
        )
    else:
        from rich.table import Table

        out = view.console()
        table = Table(box=None, pad_edge=False, header_style="bold")
        for col in ("run", "step", "state", "hosts"):
            table.add_column(col, overflow="fold")
        for g in rows:
            step = g.step + (f" ({g.spread})" if g.spread else "")
            hosts = ", ".join(f"{h} {s}" for h, s in g.states.items())
            table.add_row(g.id, view.esc(step), g.state, view.esc(hosts))
        out.print(table)
    for r in got.failed:
        sys.stderr.write(f"{r.host}: {r.error}\n")
    return 2 if got.failed else 0


def stop_across(make_ctx: Callable[[str], Any], names: Sequence[str], run: str,
                grace: float | None) -> int:  # fmt: skip
    """Stop the run on every host that has it, and the Ray cluster it started, if any."""
    from harness.runs import remote, view
    from harness.runs.context import workdir_for

    def one(name: str) -> list[str]:
        ctx = make_ctx(name)
        stopped = []
        with ctx.open() as t:
            wd = workdir_for(t, ctx.workdir, absolute=False)
            for r in remote.list_runs(t, wd).runs:
                gid = (r.record.group or {}).get("id")
                if r.id == run or gid == run:
                    if r.state == "running":
                        wait = ctx.timings.stop_grace if grace is None else grace
                        remote.stop(t, wd, r.id, timings=ctx.timings, grace=wait)
                    stopped.append(r.id)
        return stopped

    got = run_each(list(names), one)
    out = view.console()
    for r in got.results:
        if r.ok:
            out.print(
                f"{r.host}: "
                + (", ".join(r.unwrap()) + " stopped" if r.unwrap() else f"no run {run}")
            )
        else:
            out.print(f"[red]{r.host}: {view.esc(r.error or '')}[/]")
    return got.exit_code
