"""``harness matrix``: registered on the main app by ``harness.cli``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import console, print_json
from harness.cli.options import JsonOpt


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
    as_json: JsonOpt = False,
) -> None:
    """Check CALLER against many versions of a callee (pypi: wheels): errors, drift, patches."""
    from harness.patching.series import patches_root
    from harness.reading.matrix import matrix as do_matrix

    root = patches_root(patches) if with_patches else None
    if root is not None:  # once, before any version is fetched (not once per row)
        from packaging.utils import canonicalize_name

        from harness.errors import UsageError
        from harness.patching.series import dists_with_series

        name = canonicalize_name(caller.partition("==")[0].strip())
        if name not in {canonicalize_name(d) for d in dists_with_series(root)}:
            raise UsageError(
                f"--with-patches: no patch series for {name} under {root}",
                "pass --patches DIR (a folder with <dist>/<version>/series.toml), "
                "or leave out --with-patches",
            )
    m = do_matrix(caller, against, versions, with_patches=root, jobs=jobs)
    if as_json:
        print_json(m.to_dict())
    else:
        from harness.views.matrix import matrix_table

        matrix_table(console(), m)
    if any(r.errors for r in m.rows):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``harness matrix`` to ``app``."""
    app.command("matrix")(matrix)
