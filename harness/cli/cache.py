"""``harness cache list|prune``: registered on the main app by ``harness.cli``."""

from typing import Annotated

import typer

from harness.cli.common import console, print_json, show
from harness.cli.options import JsonOpt

cache_app = typer.Typer(
    name="cache",
    help="What harness keeps on this machine (wheels, unpacked sources, probe results, run "
    "logs): list it, or prune what has not been used for a while.",
    no_args_is_help=True,
)


@cache_app.command("list")
def cache_list(as_json: JsonOpt = False) -> None:
    """Every cache entry: kind, size and last use."""
    import time

    from harness.cache import cache_root
    from harness.targets.cache import scan
    from harness.views.reading import cache_table

    entries = scan(cache_root())
    if as_json:
        print_json({"root": str(cache_root()), "entries": [e.to_dict() for e in entries]})
        return
    show(console(), cache_table(str(cache_root()), entries, time.time()))


@cache_app.command("prune")
def cache_prune(
    older_than: Annotated[
        float,
        typer.Option("--older-than", metavar="DAYS", help="remove what was not used for DAYS"),
    ] = 30.0,
    everything: Annotated[
        bool, typer.Option("--all", help="remove every entry, however recent")
    ] = False,
    runs: Annotated[
        bool, typer.Option("--runs", help="also remove local copies of run logs")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="say what would go")] = False,
) -> None:
    """Free space: wheels, unpacked sources and probe results unused for --older-than days."""
    import math
    import time

    from rich.filesize import decimal
    from rich.markup import escape

    from harness.cache import cache_root, to_prune, why_kept
    from harness.errors import UsageError
    from harness.targets.cache import remove, scan

    if not (math.isfinite(older_than) and older_than >= 0):
        raise UsageError(f"--older-than {older_than:g}: give a number of days >= 0")
    entries, now = scan(cache_root()), time.time()
    chosen = to_prune(entries, now, older_than, everything=everything, runs=runs)
    out = console()
    for e in chosen:
        out.print(
            f"{'would remove' if dry_run else 'removed'} {e.kind.text} {escape(e.name)} "
            f"({decimal(e.size)})",
            soft_wrap=True,
        )
        if not dry_run:
            remove([e])
    total = decimal(sum(e.size for e in chosen))
    out.print(f"{'would free' if dry_run else 'freed'} {total}" if chosen else "nothing to prune")
    kept: dict[str, list[int]] = {}
    for e in entries:
        why = why_kept(e, now, older_than, everything, runs)
        if why is not None:
            kept.setdefault(why, []).append(e.size)
    for why, sizes in kept.items():
        out.print(f"kept {len(sizes)} ({decimal(sum(sizes))}): {why}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``harness cache`` to ``app``."""
    app.add_typer(cache_app)
