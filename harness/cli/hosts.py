"""``harness hosts``: the inventory, facts per host (``--check``), closing kept connections."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from harness.cli.common import console, hosts_config, print_json, report_error
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt
from harness.errors import HarnessError, UsageError


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
            hosts_table(console(), cfg)
        return
    from harness.reading.probe import gather_facts
    from harness.targets.registry import open_target

    names = [target] if target else (list(cfg.hosts) or ["local"])
    results: list[dict[str, Any]] = []
    failed = False
    for name in names:
        try:
            with open_target(name, cfg, accept_new_host_key=accept_new_host_key) as t:
                f = gather_facts(t, dist or [])
            results.append(f.to_dict())
            if not as_json:
                render_facts(console(), f)
        except HarnessError as exc:
            failed = True
            results.append({"target": name, "error": exc.message, "hint": exc.hint})
            if not as_json:
                report_error(exc, prefix=f"{name}: ")
    if as_json:
        print_json(results)
    if failed:
        raise typer.Exit(2)


def _disconnect(cfg: Any, target: str | None) -> None:
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
    path = mux.socket_path(cfg.hosts[target], None)
    n = mux.stop_one(path) if path else 0
    console().print(f"closed {n} kept connection(s) to {target}")


def register(app: typer.Typer) -> None:
    """Add ``harness hosts`` to ``app``."""
    app.command()(hosts)
