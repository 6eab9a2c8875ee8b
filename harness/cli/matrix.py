"""``harness matrix``: registered on the main app by ``harness.cli``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.common import check_output, console, show, write_output
from harness.cli.options import JsonOpt

if TYPE_CHECKING:
    from harness.reading.matrix import Matrix


def matrix(
    caller: Annotated[
        str, typer.Argument(metavar="CALLER==VERSION", help="e.g. speculators==0.3.0")
    ],
    against: Annotated[
        str, typer.Option("--against", metavar="CALLEE", help="the callee dist, e.g. vllm")
    ],
    versions: Annotated[
        str,
        typer.Option(
            "--versions",
            metavar="SPEC",
            help="0.11.0,0.16.0 | 0.11..0.26 (the released versions in it, from the index) | all",
        ),
    ],
    with_patches: Annotated[
        bool,
        typer.Option("--with-patches", help="check each as it will be after the patch series"),
    ] = False,
    patches: Annotated[
        Path | None,
        typer.Option("--patches", file_okay=False, help="the patches/ folder for --with-patches"),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, help="versions at once (default: by CPUs and memory)"),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="terminal | html | json (--json is --format json)")
    ] = "terminal",
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", dir_okay=False, help="write to FILE instead"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check CALLER against many versions of a callee (pypi: wheels): errors, drift, patches."""
    from harness.errors import UsageError
    from harness.patching.series import patches_root
    from harness.reading.matrix import matrix as do_matrix

    if fmt not in FORMATS or (as_json and fmt not in ("terminal", "json")):
        raise UsageError(
            f"--format {fmt!r}" + (" with --json" if as_json else ""),
            "use terminal, html or json (--json alone is --format json)",
        )
    fmt = "json" if as_json else fmt
    if output is not None:
        check_output(output, "-o")
    root = patches_root(patches) if with_patches else None
    if root is not None:  # once, before any version is fetched (not once per row)
        from packaging.utils import canonicalize_name

        from harness.patching.series import dists_with_series

        name = canonicalize_name(caller.partition("==")[0].strip())
        if name not in {canonicalize_name(d) for d in dists_with_series(root)}:
            raise UsageError(
                f"--with-patches: no patch series for {name} under {root}",
                "pass --patches DIR (a folder with <dist>/<version>/series.toml), "
                "or leave out --with-patches",
            )
    from harness.views.matrix import progress_line

    with progress_line() as on_progress:  # on a terminal: "checked 12/27 versions"
        m = do_matrix(
            caller, against, versions, with_patches=root, jobs=jobs, on_progress=on_progress
        )
    _show(m, fmt, output)
    if any(r.errors for r in m.rows):
        raise typer.Exit(1)


FORMATS = ("terminal", "html", "json")


def _show(m: Matrix, fmt: str, output: Path | None) -> None:
    """The table on the terminal, or the page/JSON/plain table on stdout or in ``-o FILE``."""
    import io
    import json

    from rich.markup import escape

    from harness.views.matrix import matrix_table, summary

    if fmt == "terminal" and output is None:
        out = console()
        show(out, matrix_table(m, out.width))
        return
    if fmt == "json":
        text = json.dumps(m.to_dict(), indent=2) + "\n"
    elif fmt == "html":
        from harness.views.matrix_html import html_page

        text = html_page(m)
    else:  # the table as plain text, 100 columns
        from rich.console import Console

        buf = io.StringIO()
        plain = Console(file=buf, width=100, highlight=False, no_color=True)
        show(plain, matrix_table(m, plain.width))
        text = buf.getvalue()
    if output is None:
        sys.stdout.write(text)
        return
    write_output(output, text, "-o")
    console().print(f"{escape(summary(m))}: wrote {escape(str(output))}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``harness matrix`` to ``app``."""
    app.command("matrix")(matrix)
