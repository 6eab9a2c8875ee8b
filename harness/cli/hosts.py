"""``harness hosts``: the inventory, facts per host (``--check``), closing kept connections."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.cli.common import console, hosts_config, print_json, report_error, show
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt
from harness.errors import HarnessError, UsageError

if TYPE_CHECKING:
    from harness.config import HostsConfig


def hosts(
    check: Annotated[bool, typer.Option("--check", help="connect and report facts")] = False,
    target: TargetOpt = None,
    dist: Annotated[
        list[str] | None,
        typer.Option("--dist", help="also report this dist's version (repeatable)"),
    ] = None,
    disconnect: Annotated[
        bool,
        typer.Option(
            "--disconnect",
            help="close the kept SSH connections (all, or -t HOST's); the next command "
            "connects afresh",
        ),
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """List targets; with --check, connect and report python, packages and GPUs."""
    from harness.views.reading import facts as render_facts
    from harness.views.reading import hosts_table

    cfg = hosts_config()
    if disconnect:
        _disconnect(cfg, target)
        return
    if not check:
        if as_json:
            print_json(
                {
                    "file": str(cfg.path) if cfg.path else None,
                    "default": cfg.default,
                    "hosts": {n: h.listing() for n, h in cfg.hosts.items()},
                }
            )
        else:
            out = console()
            show(out, hosts_table(cfg, out.width))
        return
    from harness.cli.across import group_of
    from harness.reading.probe import gather_facts
    from harness.targets.registry import open_target

    group = group_of(target) if target else (tuple(cfg.hosts) if len(cfg.hosts) > 1 else None)
    if group is not None:
        _check_group(cfg, group, dist or [], as_json, accept_new_host_key)
        return
    names = [target] if target else (list(cfg.hosts) or ["local"])
    results: list[dict[str, Any]] = []
    failed = False
    for name in names:
        try:
            with open_target(name, cfg, accept_new_host_key=accept_new_host_key) as t:
                f = gather_facts(t, dist or [])
            results.append(f.to_dict())
            if not as_json:
                show(console(), render_facts(f))
        except HarnessError as exc:
            failed = True
            results.append({"target": name, "error": exc.message, "hint": exc.hint})
            if not as_json:
                report_error(exc, prefix=f"{name}: ")
    if as_json:
        print_json(results)
    if failed:
        raise typer.Exit(2)


def _check_group(
    cfg: Any, hosts: tuple[str, ...], dists: list[str], as_json: bool, accept: bool
) -> None:
    """``hosts --check`` over several hosts: facts from all at once, one table, differences."""
    import time

    from harness.group.result import run_each, values
    from harness.group.sameness import NCCL_DISTS, compare
    from harness.reading.probe import gather_facts
    from harness.targets.registry import open_target
    from harness.views.reading import sameness_table

    def facts(name: str) -> Any:
        with open_target(name, cfg, accept_new_host_key=accept) as t:
            return gather_facts(t, [*NCCL_DISTS, *dists])

    start = time.perf_counter()
    got = run_each(hosts, facts)
    seconds = time.perf_counter() - start
    same = compare(values(got), dists) if got.succeeded else None
    if as_json:
        print_json(
            {
                "hosts": {
                    r.host: r.unwrap().to_dict() if r.ok else {"error": r.error, "hint": r.hint}
                    for r in got.results
                },
                "differences": same.blockers if same else [],
                "seconds": round(seconds, 3),
            }
        )
    else:
        out = console()
        if same is not None:
            show(out, sameness_table(same))
        for r in got.failed:
            out.print(f"[red]{r.host}: {r.error}[/]" + (f"  [dim]{r.hint}[/]" if r.hint else ""))
        out.print(f"[dim]{len(hosts)} host(s) in {seconds:.2f} s: {got.summary()}[/]")
    if not got.ok:
        raise typer.Exit(2)
    if same is not None and same.blockers:
        raise typer.Exit(1)


def _disconnect(cfg: HostsConfig, target: str | None) -> None:
    """Stop kept connections (the mux servers), every one or the named host's."""
    from harness.targets import mux

    if target is None:
        n = mux.stop_all()
        console().print(f"closed {n} kept connection(s)")
        return
    if target not in cfg.hosts:
        raise UsageError(
            f"--disconnect -t {target}: not a host in {cfg.path or 'hosts.toml'}",
            "kept connections exist for SSH hosts only; leave out -t to close them all",
        )
    from harness.targets.ssh.entry import HostConfig
    from harness.targets.wrapped import ExecEntry

    entry = cfg.hosts[target]
    while isinstance(entry, ExecEntry) and entry.inner is not None:
        entry = entry.inner  # a wrapped target's connection is its SSH host's
    if not isinstance(entry, HostConfig):
        console().print(f"{target} is reached without a kept connection: nothing to close")
        return
    path = mux.socket_path(entry, None)
    n = mux.stop_one(path) if path else 0
    console().print(f"closed {n} kept connection(s) to {target}")


def register(app: typer.Typer) -> None:
    """Add ``harness hosts`` to ``app``."""
    app.command()(hosts)
