"""``-t`` at the edge: one target, or a group of hosts that a command runs across in-process.

``-t gpu1,gpu2`` or ``-t nodes`` (a ``[groups]`` entry) names several hosts. It is resolved
here, once, before a command's body runs -- never discovered below, while opening a target.
Commands with a meaning of their own across hosts (:data:`OWN_MEANING`: ``run``, ``report``,
``apply-patches``...) take the group themselves; every other command runs once per host,
concurrently, in this process (Fabric's ``Group``: one call, a result per host), and the
outputs come back per host in inventory order with one summary line and the worst exit code;
``--json`` gives ``{"host": <that host's JSON>}``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.group.result import GroupResult, HostResult

#: Commands that take a group in their own body, and when (given their arguments) they do;
#: the others with a meaning across hosts declare their group form (:func:`on_group`).
OWN_MEANING: dict[str, Callable[[dict[str, Any]], bool]] = {
    "run": lambda kw: True,  # one path for one target and several (harness.launch.start)
    "hosts": lambda kw: True,  # --check with no -t is every host too
}


def group_of(spec: str | None) -> tuple[str, ...] | None:
    """The hosts ``-t SPEC`` names when it names several; ``None`` for one target."""
    from harness.cli.common import hosts_config
    from harness.group.spec import expand

    return expand(spec, hosts_config())


def exit_code_of(body: Callable[[], Any]) -> int:
    """Run one command body as ``main`` would: its exit code, its errors reported."""
    import typer

    from harness.cli.common import report_error

    try:
        body()
    except typer.Exit as e:
        return e.exit_code
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except HarnessError as exc:
        report_error(exc)
        return exc.exit_code
    return 0


def across(hosts: Sequence[str], body: Callable[[str], Any]) -> GroupResult[tuple[str, str]]:
    """``body(host)`` on every host at once, in-process; each value is (stdout, stderr)."""
    from harness.cli.hostio import Captured, on_each, routed

    sinks = {h: Captured() for h in hosts}

    def one(host: str) -> HostResult[tuple[str, str]]:
        code = exit_code_of(lambda: body(host))
        got = sinks[host]
        return HostResult(host, value=(got.out, got.err), exit_code=code)

    with routed():
        return GroupResult(tuple(on_each(hosts, one, sinks.__getitem__)))


def on_group(
    form: Callable[..., None], unless: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a command's form across hosts: ``form(hosts, **the command's arguments)``
    runs instead of the command when ``-t`` names several hosts -- unless the flag named
    ``unless`` is given (``apply-patches --dry-run`` is per host, like any command)."""

    def mark(command: Callable[..., Any]) -> Callable[..., Any]:
        command.group_form = form  # type: ignore[attr-defined]
        command.group_form_unless = unless  # type: ignore[attr-defined]
        return command

    return mark


def per_host(name: str, callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` as a command that, given a group in ``-t``, runs its group form, else
    once per host."""
    own = OWN_MEANING.get(name)
    form = getattr(callback, "group_form", None)
    unless = getattr(callback, "group_form_unless", None)

    @functools.wraps(callback)
    def command(*args: Any, **kwargs: Any) -> Any:
        if "target" not in kwargs or (own is not None and own(kwargs)):
            return callback(*args, **kwargs)
        hosts = group_of(kwargs["target"])
        if hosts is None:
            return callback(*args, **kwargs)
        if form is not None and not (unless and kwargs.get(unless)):
            return form(hosts, **kwargs)
        got = across(hosts, lambda h: callback(*args, **{**kwargs, "target": h}))
        import typer

        raise typer.Exit(render(got, bool(kwargs.get("as_json"))))

    return command


def render(got: GroupResult[tuple[str, str]], as_json: bool) -> int:
    """Each host's output under its name, then one summary line; the worst exit code."""
    if as_json:
        doc = {}
        for r in got.results:
            out = r.value[0] if r.value else ""
            try:
                doc[r.host] = json.loads(out) if out.strip() else None
            except ValueError:
                doc[r.host] = {"stdout": out}
            if not r.ok:
                err = (r.value[1] if r.value else r.error or "")[-2000:]
                doc[r.host] = {"exit": r.exit_code, "result": doc[r.host], "stderr": err}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return got.exit_code
    for r in got.results:
        out, err = r.value or ("", r.error or "")
        sys.stdout.write(f"── {r.host} (exit {r.exit_code or (2 if r.error else 0)})\n")
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
        if err.strip():
            sys.stdout.write(err if err.endswith("\n") else err + "\n")
    sys.stdout.write(f"── {got.summary()}\n")
    return got.exit_code


def wrap_commands(app: Any) -> None:
    """Make every registered command group-aware (call once all commands are registered)."""
    for info in app.registered_commands:
        name = info.name or info.callback.__name__.lower().replace("_", "-")
        info.callback = per_host(name, info.callback)


def follow_each(hosts: Sequence[str], body: Callable[[str], Any]) -> dict[str, int]:
    """``body(host)`` (a ``harness logs`` of one host) on every host at once, each line of its
    output -- stdout and stderr -- on stdout with ``[host] `` in front; the exit codes.
    Each host's local copy of its log stays byte-exact: only the screen gets prefixes."""
    import threading

    from harness.cli.hostio import Prefixed, on_each, routed

    lock = threading.Lock()
    real = sys.stdout.buffer
    sinks = {h: Prefixed(h, real, lock) for h in hosts}

    def one(host: str) -> int:
        return exit_code_of(lambda: body(host))

    with routed():
        try:
            codes = on_each(hosts, one, sinks.__getitem__)
        except KeyboardInterrupt:  # detached: the hosts' followers stop showing anything
            for s in sinks.values():
                s.mute()
            raise
    return dict(zip(hosts, codes, strict=True))


def followed(err: Any, run_id: str, hosts: Sequence[str], codes: dict[str, int]) -> int:
    """The outcome of following ``run_id`` on every host to its end: the worst exit code."""
    bad = {n: c for n, c in codes.items() if c != 0}
    if bad:
        err.print(
            f"[red]✗ {run_id} failed on "
            + ", ".join(f"{n} (exit {c})" for n, c in bad.items())
            + "[/]"
        )
        return max(bad.values())
    err.print(f"[green]✓ {run_id} succeeded on {', '.join(hosts)}[/]")
    return 0


def detached(err: Any, run_id: str, hosts: Sequence[str]) -> int:
    err.print(
        f"\ndetached: {run_id} keeps running; harness logs {run_id} -t {','.join(hosts)} --follow"
    )
    return 130
