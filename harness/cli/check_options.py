"""``harness check``'s options, and the usage errors they make together (pure).

Declared apart from the command so that its signature reads as a list, and the rules on
which options go together are a function a table can test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.errors import UsageError

CallerOpt = Annotated[
    str | None,
    typer.Argument(help="the caller dist, e.g. speculators (optional with --step)"),
]
AgainstOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--against",
        help="callee package(s) to check (repeatable); default: every installed "
        "package with Python source that the caller imports",
    ),
]
BaselineOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--baseline",
        help="callee version the caller was written for, e.g. vllm==0.11.0; "
        "default: the exact pin in the caller's metadata",
    ),
]
NoBaselineOpt = Annotated[bool, typer.Option("--no-baseline", help="skip drift (no PyPI download)")]
BaselineFromOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline-from",
        file_okay=False,
        exists=True,
        help="a folder holding the baseline's wheel (pip download --no-deps vllm==0.11.0 "
        "-d DIR), for a box without an index",
    ),
]
WithPatchesOpt = Annotated[
    bool,
    typer.Option(
        "--with-patches",
        help="check the environment as it will be after the patch series in patches/",
    ),
]
PatchesOpt = Annotated[
    Path | None,
    typer.Option("--patches", file_okay=False, help="the patches/ folder for --with-patches"),
]
FixOpt = Annotated[
    bool,
    typer.Option(
        "--fix",
        help="write the certain fixes (moved imports, renamed keywords/classes/functions, "
        "provably dead keywords) as the next patch of patches/CALLER/VERSION; list the "
        "rest as needing a person",
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="with --fix: print the diff, write nothing")
]
NameOpt = Annotated[str, typer.Option("--name", help="with --fix: slug for NNNN-slug.patch")]
RequiresOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--requires",
        help="with --fix: gate the patch on these callee versions instead of the installed "
        "minor series, e.g. 'vllm>=0.33,<0.35' (repeatable)",
    ),
]
StepOpt = Annotated[
    str | None,
    typer.Option(
        "--step",
        help="a pipeline step that starts `vllm serve`: check its flags and the keys of "
        "its --speculative-config/--kv-transfer-config against the target's vLLM",
    ),
]
PipelineOpt = Annotated[Path | None, typer.Option("--pipeline", dir_okay=False, help="with --step")]
SetsOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="with --step: NAME=VALUE, as `harness run` takes it"),
]
SmokeOpt = Annotated[
    bool,
    typer.Option(
        "--smoke",
        help="with --step: the command a --smoke run would start "
        "(its smoke args: --load-format dummy, --hf-overrides ...)",
    ),
]


def check_usage(
    caller: str | None,
    step: str | None,
    *,
    with_step: bool,
    with_fix: bool,
    fix: bool,
    with_patches: bool,
    no_baseline: bool,
) -> UsageError | None:
    """The one usage error ``harness check``'s options make together, if any (pure):
    ``with_step`` / ``with_fix``: an option that goes only with ``--step`` / ``--fix`` given."""
    if caller is None and step is None:
        return UsageError("name a CALLER, or a pipeline --step", "e.g. harness check speculators")
    if step is None and with_step:
        return UsageError("--pipeline, --set and --smoke go with --step", "add --step STEP")
    if step is not None and (fix or with_patches):
        return UsageError("--step checks a command as it stands", "drop --fix/--with-patches")
    if caller is None:
        return None
    if not fix and with_fix:
        return UsageError("--dry-run, --name and --requires go with --fix", "add --fix")
    if fix and no_baseline:
        return UsageError(
            "--fix compares the installed API with the one the caller was written for: it "
            "needs the baseline",
            "drop --no-baseline (or name it: --baseline DIST==VERSION)",
        )
    return None
