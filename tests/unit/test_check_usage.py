"""``harness check``'s options that do not go together: one usage error each, decided by a
pure function (cli/check_options.check_usage), the command's first act."""

from __future__ import annotations

import pytest

from harness.cli.check_options import check_usage

NONE: dict[str, bool] = dict(
    with_step=False, with_fix=False, fix=False, with_patches=False, no_baseline=False
)

CASES = [
    # caller, step, flags set, the error's first words (None: accepted)
    ("speculators", None, {}, None),
    (None, "serve", {}, None),
    (None, "serve", {"with_step": True}, None),
    ("speculators", None, {"fix": True, "with_fix": True}, None),
    (None, None, {}, "name a CALLER"),
    ("speculators", None, {"with_step": True}, "--pipeline, --set and --smoke go with --step"),
    (None, "serve", {"fix": True}, "--step checks a command as it stands"),
    ("speculators", "serve", {"with_patches": True}, "--step checks a command as it stands"),
    ("speculators", None, {"with_fix": True}, "--dry-run, --name and --requires go with --fix"),
    ("speculators", None, {"fix": True, "no_baseline": True}, "--fix compares"),
    (None, "serve", {"no_baseline": True}, None),  # the step's check reads no baseline
]  # fmt: skip


@pytest.mark.parametrize(("caller", "step", "flags", "want"), CASES)
def test_check_usage(
    caller: str | None, step: str | None, flags: dict[str, bool], want: str | None
) -> None:
    got = check_usage(caller, step, **{**NONE, **flags})
    if want is None:
        assert got is None
    else:
        assert got is not None and str(got).startswith(want)
