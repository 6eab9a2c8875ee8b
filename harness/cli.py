"""The command line: parse, call one function, render. Errors become one red line + a hint.

Heavy modules (Fabric, Paramiko, Rich's renderers) are imported inside commands, so that
``harness --help`` and local work start fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from harness.errors import HarnessError, UsageError

app = typer.Typer(
    name="harness",
    help="Read, patch and run ML pipelines on a remote GPU box -- without waiting for a model "
    "load to find the next API mismatch.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    pretty_exceptions_enable=False,
)

from harness.cli_options import (  # noqa: E402 - shared by extensions
    HOSTS_HELP,
    TARGET_HELP,
    AcceptOpt,
    JsonOpt,
    State,
    TargetOpt,
    use_global_options,
)


def _version(value: bool) -> None:
    if value:
        from harness import __version__

        sys.stdout.write(f"harness {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    hosts: Annotated[
        Path | None, typer.Option("--hosts", metavar="FILE", help=HOSTS_HELP, dir_okay=False)
    ] = None,
    target: Annotated[str | None, typer.Option("--target", "-t", help=TARGET_HELP)] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="print harness's version and exit", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Options here apply to the subcommand; they may also follow it."""
    State.hosts_file = hosts
    State.target = target


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def _hosts() -> Any:
    from harness.config import find_hosts_file, load_hosts

    return load_hosts(find_hosts_file(State.hosts_file))


def _target(spec: str | None, accept_new: bool = False) -> Any:
    from harness.targets import open_target

    return open_target(spec, _hosts(), accept_new_host_key=accept_new)


def _check_group(
    cfg: Any, hosts: tuple[str, ...], dists: list[str], as_json: bool, accept: bool
) -> None:
    """``hosts --check`` over several hosts: facts from all at once, one table, differences."""
    import time

    from harness.group.result import run_each, values
    from harness.group.sameness import NCCL_DISTS, compare
    from harness.probe import gather_facts
    from harness.render import sameness_table
    from harness.targets import open_target

    def facts(name: str) -> Any:
        with open_target(name, cfg, accept_new_host_key=accept) as t:
            return gather_facts(t, [*NCCL_DISTS, *dists])

    start = time.perf_counter()
    got = run_each(hosts, facts)
    seconds = time.perf_counter() - start
    same = compare(values(got), dists) if got.succeeded else None
    if as_json:
        _print_json(
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
        out = _console()
        if same is not None:
            sameness_table(out, same)
        for r in got.failed:
            out.print(f"[red]{r.host}: {r.error}[/]" + (f"  [dim]{r.hint}[/]" if r.hint else ""))
        out.print(f"[dim]{len(hosts)} host(s) in {seconds:.2f} s: {got.summary()}[/]")
    if not got.ok:
        raise typer.Exit(2)
    if same is not None and same.blockers:
        raise typer.Exit(1)


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


@app.command()
def probe(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="MODULE[:QUALNAME]",
            help="e.g. vllm.v1.core.kv_cache_utils or vllm.config:SchedulerConfig",
        ),
    ],
    target: TargetOpt = None,
    source: Annotated[bool, typer.Option("--source", help="print the symbol's source")] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live", help="import on the target and use inspect.signature (slow; runs module code)"
        ),
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Signatures and source locations of what is installed on the target, without importing."""
    from harness.probe import probe as do_probe

    with _target(target, accept_new_host_key) as t:
        report = do_probe(t, ref, source=source, live=live)
    if as_json:
        _print_json(report.to_dict())
        return
    from harness.render import probe_report

    probe_report(_console(), report)


@app.command()
def check(
    caller: Annotated[str, typer.Argument(help="the caller dist, e.g. speculators")],
    against: Annotated[
        list[str] | None,
        typer.Option(
            "--against",
            help="callee package(s) to check (repeatable); default: every installed "
            "package with Python source that the caller imports",
        ),
    ] = None,
    target: TargetOpt = None,
    baseline: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline",
            help="callee version the caller was written for, e.g. vllm==0.11.0; "
            "default: the exact pin in the caller's metadata",
        ),
    ] = None,
    no_baseline: Annotated[
        bool, typer.Option("--no-baseline", help="skip drift (no PyPI download)")
    ] = False,
    baseline_from: Annotated[
        Path | None,
        typer.Option(
            "--baseline-from",
            file_okay=False,
            exists=True,
            help="a folder holding the baseline's wheel (pip download --no-deps vllm==0.11.0 "
            "-d DIR), for a box without an index",
        ),
    ] = None,
    with_patches: Annotated[
        bool,
        typer.Option(
            "--with-patches",
            help="check the environment as it will be after the patch series in patches/",
        ),
    ] = False,
    patches: Annotated[
        Path | None,
        typer.Option("--patches", file_okay=False, help="the patches/ folder for --with-patches"),
    ] = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="write the certain fixes (moved imports, renamed keywords/classes/functions, "
            "provably dead keywords) as the next patch of patches/CALLER/VERSION; list the "
            "rest as needing a person",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="with --fix: print the diff, write nothing")
    ] = False,
    name: Annotated[
        str, typer.Option("--name", help="with --fix: slug for NNNN-slug.patch")
    ] = "check-fix",
    requires: Annotated[
        list[str] | None,
        typer.Option(
            "--requires",
            help="with --fix: gate the patch on these callee versions instead of the installed "
            "minor series, e.g. 'vllm>=0.33,<0.35' (repeatable)",
        ),
    ] = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Find every call from CALLER that no longer binds to what is installed -- in one pass."""
    from harness.check import check as do_check

    if not fix and (dry_run or requires or name != "check-fix"):
        raise UsageError("--dry-run, --name and --requires go with --fix", "add --fix")
    if fix and no_baseline:
        raise UsageError(
            "--fix compares the installed API with the one the caller was written for: it "
            "needs the baseline",
            "drop --no-baseline (or name it: --baseline DIST==VERSION)",
        )
    if fix:
        _fix(
            caller,
            against,
            target,
            baseline,
            baseline_from,
            patches,
            dry_run,
            name,
            requires or [],
            as_json,
            accept_new_host_key,
        )
        return
    with _target(target, accept_new_host_key) as t:
        from harness.patching.series import patches_root

        report = do_check(
            t,
            caller,
            against=against,
            baseline=baseline,
            no_baseline=no_baseline,
            with_patches=patches_root(patches) if with_patches else None,
            baseline_from=baseline_from,
        )
    if as_json:
        _print_json(report.to_dict())
    else:
        from harness.render import check_report

        check_report(_console(), report)
    if report.errors:
        raise typer.Exit(1)


def _fix(
    caller: str,
    against: list[str] | None,
    target: str | None,
    baseline: list[str] | None,
    baseline_from: Path | None,
    patches: Path | None,
    dry_run: bool,
    name: str,
    requires: list[str],
    as_json: bool,
    accept_new_host_key: bool,
) -> None:
    """``check --fix``: the patch for the mechanical breaks; exit 1 while any need a person."""
    from harness.fixing.run import fix
    from harness.patching.make import parse_requires
    from harness.patching.series import patches_root

    gates = parse_requires(requires)
    with _target(target, accept_new_host_key) as t:
        report = fix(
            t,
            caller,
            patches_root(patches),
            against=against,
            baseline=baseline,
            baseline_from=baseline_from,
            slug=name,
            dry_run=dry_run,
            requires=gates,
        )
    if as_json:
        _print_json(report.to_dict())
    else:
        from harness.fixing.view import fix_report

        fix_report(_console(), report)
    if report.manual:
        raise typer.Exit(1)


@app.command()
def diff(
    dist: Annotated[str, typer.Argument(help="the dist whose API moved, e.g. vllm")],
    source: Annotated[
        str, typer.Option("--from", help="old side: a target, e.g. pypi:vllm==0.11.0")
    ],
    dest: Annotated[str, typer.Option("--to", help="new side: a target, e.g. gpu")],
    used_by: Annotated[
        str | None,
        typer.Option("--used-by", help="only what this caller dist uses, with its call sites"),
    ] = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """How DIST's API moved between two targets: added, removed, moved, changed."""
    from harness.diff import diff as do_diff

    with _target(source, accept_new_host_key) as old, _target(dest, accept_new_host_key) as new:
        report = do_diff(dist, old, new, used_by=used_by)
    if as_json:
        _print_json(report.to_dict())
        return
    from harness.render import diff_report

    diff_report(_console(), report)


@app.command()
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
    from harness.render import facts as render_facts
    from harness.render import hosts_table

    cfg = _hosts()
    if disconnect:
        _disconnect(cfg, target)
        return
    if not check:
        if as_json:
            _print_json(
                {
                    "file": str(cfg.path) if cfg.path else None,
                    "default": cfg.default,
                    "hosts": {
                        n: {
                            "address": h.address,
                            "user": h.user,
                            "port": h.port,
                            "python": h.python,
                            "workdir": h.workdir,
                            "source": h.source,
                        }
                        for n, h in cfg.hosts.items()
                    },
                }
            )
        else:
            hosts_table(_console(), cfg)
        return
    from harness.group.spec import expand
    from harness.probe import gather_facts
    from harness.targets import open_target

    group = expand(target, cfg) if target else (tuple(cfg.hosts) if len(cfg.hosts) > 1 else None)
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
                render_facts(_console(), f)
        except HarnessError as exc:
            failed = True
            results.append({"target": name, "error": exc.message, "hint": exc.hint})
            if not as_json:
                _report_error(exc, prefix=f"{name}: ")
    if as_json:
        _print_json(results)
    if failed:
        raise typer.Exit(2)


def _disconnect(cfg: Any, target: str | None) -> None:
    """Stop kept connections (the mux servers), every one or the named host's."""
    from harness.targets import mux

    if target is None:
        n = mux.stop_all()
        _console().print(f"closed {n} kept connection(s)")
        return
    if target not in cfg.hosts:
        raise UsageError(
            f"--disconnect -t {target}: not a host in {cfg.path or 'hosts.toml'}",
            "kept connections exist for SSH hosts only; leave out -t to close them all",
        )
    path = mux.socket_path(cfg.hosts[target], None)
    n = mux.stop_one(path) if path else 0
    _console().print(f"closed {n} kept connection(s) to {target}")


def _register_command_groups() -> None:
    """Command groups that live beside their domain code (runs, patches, report, cache)."""
    from harness import cache_cli
    from harness.patching import cli as patching_cli
    from harness.report import cli as report_cli
    from harness.runs import cli as runs_cli

    for group in (runs_cli, patching_cli, report_cli, cache_cli):
        group.register(app)
    use_global_options(app)


_register_command_groups()


def _report_error(exc: HarnessError, prefix: str = "") -> None:
    from rich.markup import escape

    from harness.errors import Interrupted

    err = _console(stderr=True)
    label = (
        "[bold yellow]interrupted:[/]" if isinstance(exc, Interrupted) else "[bold red]error:[/]"
    )
    err.print(f"{label} {escape(prefix + exc.message)}", soft_wrap=True)
    if exc.hint:
        err.print(f"[yellow]hint:[/] {escape(exc.hint)}", soft_wrap=True)


def main() -> NoReturn:
    """Entry point: every HarnessError becomes a message and an exit code, never a traceback."""
    from harness.group.fanout import GroupTarget

    try:
        app()
    except GroupTarget as group:  # -t named several hosts: the command once per host
        from harness.group.fanout import fan_out, render

        argv = sys.argv[1:]
        sys.exit(render(fan_out(group.hosts, argv), "--json" in argv))
    except HarnessError as exc:
        _report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(0)


if __name__ == "__main__":
    main()
