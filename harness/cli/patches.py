"""Patch commands, registered on the main Typer app by ``harness.cli``."""

from pathlib import Path
from typing import Annotated, Any

import typer

from harness.cli.across import on_group
from harness.cli.common import (
    check_output,
    console,
    hosts_config,
    print_json,
    show,
    target_for,
    write_output,
)
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt

PatchesOpt = Annotated[
    Path | None,
    typer.Option(
        "--patches",
        help="the patches/ folder (default: ./patches or a parent folder's)",
        file_okay=False,
    ),
]
DistOpt = Annotated[str | None, typer.Option("--dist", help="only this dist's series")]


def _outcome(reports: list[Any]) -> str:
    """The last line of apply-patches: what was written, or why nothing was."""
    from harness.patching.plan import APPLIED, BY_HAND, SKIPPED

    wrote = sum(len(r.written) for r in reports)
    states = [p.state for r in reports if r.plan is not None for p in r.plan.patches]
    skipped = states.count(SKIPPED)
    warned = sum(len(r.warnings) for r in reports)
    if warned:
        skipped_text = f"{skipped} skipped, {warned} of them by a misspelled requires"
    else:
        skipped_text = f"{skipped} skipped"
    if wrote:
        return f"[green]applied: {wrote} file(s) written[/]" + (
            f" [yellow]({skipped_text})[/]" if skipped else ""
        )
    if not any(s in (APPLIED, BY_HAND) for s in states):
        return (
            "[yellow]nothing written: no patch of the series applies here"
            + (f" ({skipped_text})" if skipped else "")
            + "[/]"
        )
    return "[green]already applied: nothing written[/]" + (
        f" [yellow]({skipped_text})[/]" if skipped else ""
    )


def again(target: str | None, patches: Path | None) -> str:
    """The options a suggested command repeats, so it names the same target and series."""
    from harness.targets.shell import quote

    out = f" -t {quote(target)}" if target else ""
    return out + (f" --patches {quote(str(patches))}" if patches is not None else "")


def _root(p: Path | None) -> Path:
    from harness.patching.series import patches_root

    return patches_root(p)


def _emit(reports: list[Any], as_json: bool, diffs: bool = False) -> None:
    if as_json:
        print_json([r.to_dict() for r in reports])
        return
    from harness.views.patches import status as view

    show(console(), view(reports, diffs=diffs))


def patches_cmd(
    target: TargetOpt = None,
    patches: PatchesOpt = None,
    dist: DistOpt = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Each patch's state on the target: applied, applies cleanly, conflicts, skipped."""
    from harness.patching.ops import status

    with target_for(target, accept_new_host_key) as t:
        reports = status(t, _root(patches), only=dist)
    _emit(reports, as_json)
    if any(r.plan is not None and not r.plan.ok for r in reports):
        raise typer.Exit(1)


def apply_cmd(
    target: TargetOpt = None,
    patches: PatchesOpt = None,
    dist: DistOpt = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="show the patch-diff report against the live files; write nothing"
        ),
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", help="also write the patch-diff report as Markdown", dir_okay=False
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="patch files that differ from pip's RECORD")
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Apply the series all-or-nothing, idempotently, with backups and a journal."""
    from harness.errors import Interrupted
    from harness.patching.writing import applied_line, apply_patches

    if report is not None:  # before anything is written on the target
        check_output(report, "--report")
    flags = again(target, patches)
    reports: list[Any] | None = None
    try:  # a Ctrl-C outside the writes (which wait for themselves) says what is there
        with target_for(target, accept_new_host_key) as t:
            if not dry_run:
                warn_live_runs(t)
            reports = apply_patches(
                t,
                _root(patches),
                dry_run=dry_run,
                force=force,
                only=dist,
                again=flags,
            )
            label = t.label
        _emit(reports, as_json, diffs=dry_run)
        if not as_json and not dry_run:
            console().print(_outcome(reports))
        if report is not None:
            from harness.views.patches import markdown

            write_output(report, markdown(reports, label), "--report")
    except KeyboardInterrupt:
        raise Interrupted(f"{applied_line(reports)}; see it with: harness patches{flags}") from None
    if dry_run and any(r.plan is not None and not r.plan.ok for r in reports):
        raise typer.Exit(1)


def revert_cmd(
    target: TargetOpt = None,
    patches: PatchesOpt = None,
    dist: DistOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="restore originals even over files changed since")
    ] = False,
    forget: Annotated[
        bool,
        typer.Option(
            "--forget",
            help="files pip installed again since the apply are left as pip's; only "
            "harness's record of them goes",
        ),
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Restore every file harness patched, byte-identical (sha256 checked)."""
    from harness.errors import Interrupted
    from harness.patching.reverting import revert_patches, reverted_line

    flags = again(target, patches)
    reports: list[Any] | None = None
    try:  # a Ctrl-C outside the writes (which wait for themselves) says what is there
        with target_for(target, accept_new_host_key) as t:
            warn_live_runs(t)
            reports = revert_patches(
                t, _root(patches), force=force, only=dist, again=flags, forget=forget
            )
        _emit(reports, as_json)
    except KeyboardInterrupt:
        left = reverted_line(reports)
        raise Interrupted(f"{left}; see it with: harness patches{flags}") from None


def warn_live_runs(t: Any) -> None:
    """Files patched under a live run: it keeps the modules it imported, so say so first."""
    import os

    from rich.markup import escape

    from harness.errors import HarnessError
    from harness.runs.record.lifecycle import RunState
    from harness.runs.target import remote
    from harness.runs.target.context import workdir_for

    try:
        wd = workdir_for(t, os.environ.get("HARNESS_WORKDIR"), absolute=False)
        live = [r.id for r in remote.list_runs(t, wd).runs if r.state == RunState.RUNNING]
    except HarnessError:
        return  # the write itself says what is wrong with the target
    if live:
        console(stderr=True).print(
            f"[bold yellow]warning:[/] {len(live)} run(s) live on {escape(t.label)}: "
            f"{escape(', '.join(live))}; a running process keeps the modules it imported, so "
            "the change reaches it only when it starts again",
            soft_wrap=True,
        )


def _emit_lines(lines: list[str], as_json: bool, ok: bool) -> None:
    """What a command across hosts did, one line per host and the outcome."""
    if as_json:
        print_json({"ok": ok, "lines": lines})
        return
    out = console()
    for line in lines:
        out.print(line, markup=False, soft_wrap=True)


def make_cmd(
    dist: Annotated[str, typer.Argument(help="the dist you edited on the target")],
    files: Annotated[
        list[str] | None,
        typer.Argument(help="files relative to site-packages (default: every hand-edited file)"),
    ] = None,
    name: Annotated[str, typer.Option("--name", help="slug for NNNN-slug.patch")] = "fix",
    why: Annotated[str | None, typer.Option("--why", help="one line for series.toml")] = None,
    requires: Annotated[
        list[str] | None,
        typer.Option(
            "--requires",
            help="gate the patch on another dist's versions, e.g. 'vllm>=0.20,<0.21' (repeatable)",
        ),
    ] = None,
    target: TargetOpt = None,
    patches: PatchesOpt = None,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Write the target's hand edits as the next patch of patches/<dist>/<version>/."""
    from harness.patching.make import check_slug, make_patch, parse_requires

    check_slug(name)  # before any connection
    gates = parse_requires(requires or [])
    with target_for(target, accept_new_host_key) as t:
        path = make_patch(t, _root(patches), dist, files or [], name, why, gates)
        label, adopted = t.label, t.writable
    console().print(f"[green]wrote[/] {path} and appended it to series.toml")
    if adopted:
        console().print(
            f"recorded as applied on {label}: `harness revert-patches` restores what pip installed"
        )


# -- the same commands when -t names several hosts (harness.cli.across calls them) ------------


def _commit_delay(n: int) -> None:
    """The tests' hook (``HARNESS_GROUP_COMMIT_DELAY_S``): a pause between prepare and commit,
    announced on stderr so that a test drops a link once every host is prepared."""
    import os
    import time

    from harness.group.patches import DELAY_ENV

    delay = float(os.environ.get(DELAY_ENV) or 0)
    if delay > 0:
        console(stderr=True).print(f"harness: prepared on {n} hosts; committing in {delay:g} s")
        time.sleep(delay)


def apply_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """Every host or none: prepared everywhere, then committed everywhere."""
    from harness.group.patches import apply_across, describe

    if kw["report"] is not None:  # before anything is written on any host
        check_output(kw["report"], "--report")
    got = apply_across(
        hosts,
        lambda h: target_for(h, kw["accept_new_host_key"]),
        _root(kw["patches"]),
        force=kw["force"],
        only=kw["dist"],
        between=lambda: _commit_delay(len(hosts)),
    )
    _emit_lines(describe(got), kw["as_json"], got.ok)
    if not got.ok:
        raise typer.Exit(got.prepared.exit_code or (got.failed.exit_code if got.failed else 1) or 1)


def revert_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    from harness.group.patches import revert_across

    got = revert_across(
        hosts,
        lambda h: target_for(h, kw["accept_new_host_key"]),
        _root(kw["patches"]),
        force=kw["force"],
        only=kw["dist"],
        forget=kw["forget"],
    )
    lines = [f"{r.host}: " + ("reverted" if r.ok else f"failed: {r.error}") for r in got.results]
    _emit_lines(lines, kw["as_json"], got.ok)
    if not got.ok:
        raise typer.Exit(got.exit_code or 1)


def make_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """Refused: once per host would write one patch per host, racing for a number."""
    from harness.errors import UsageError
    from harness.patching.make import check_slug, parse_requires

    check_slug(kw["name"])  # the same errors first as on one host
    parse_requires(kw["requires"] or [])
    spec = kw["target"] or hosts_config().default
    raise UsageError(
        f"make-patch -t {spec}: records one host's edits, and {spec} is "
        f"{len(hosts)} hosts ({', '.join(hosts)})",
        f"name the host you edited on (-t {hosts[0]}), then "
        f"`harness apply-patches -t {spec}` puts the patch on every host",
    )


def register(app: typer.Typer) -> None:
    """Add these commands to ``app`` (in this order: it is ``--help``'s)."""
    app.command("patches")(patches_cmd)
    app.command("apply-patches")(on_group(apply_on_group, unless="dry_run")(apply_cmd))
    app.command("revert-patches")(on_group(revert_on_group)(revert_cmd))
    app.command("make-patch")(on_group(make_on_group)(make_cmd))
