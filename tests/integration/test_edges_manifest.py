"""Issue 35 items 6 and 7: the patch state on the target, when it is not what harness left.

6. A corrupt ``.harness-patches/manifest.json`` was read as empty, silently:
   ``revert-patches`` said "nothing to revert", ``patches`` called the patched files "edited
   by hand". Now it is named, refused (nothing written, the file kept as it is), with how to
   recover.
7. A file deleted by hand read as hunks that do not match; ``make-patch`` said "no hand edits
   found". Now it is "missing", in ``patches``, ``apply-patches``, ``revert-patches`` and
   ``make-patch``.

Real processes on the tinypkg venv of ``test_patches_faults`` (pip's own install).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import (
    FIXTURES,
    Tiny,
    installed,
    leftovers,
    tiny,  # noqa: F401 - a fixture
)
from tests.support.cli import CliResult, run_cli

ALPHA = "tinypkg/alpha.py"


@pytest.fixture
def h(cli_env: dict[str, str], tiny: Tiny, tmp_path: Path) -> Callable[..., CliResult]:  # noqa: F811
    patches = tmp_path / "patches"
    shutil.copytree(FIXTURES / "good", patches)

    def call(*args: str) -> CliResult:
        return run_cli(*args, "-t", f"venv:{tiny.root}", "--patches", str(patches), env=cli_env)

    return call


def one_error(r: CliResult) -> tuple[str, str]:
    assert "Traceback" not in r.err and "probe crashed" not in r.err, r.err
    lines = r.err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("hint: "), r.err
    return lines[0], lines[1]


# -- item 6: a manifest that cannot be read ---------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda b: b[: len(b) // 2], "not JSON: "),  # half-written
        (lambda b: b"", "empty"),
        (lambda b: b"\xff\xfe" + b, "not UTF-8 text"),
        (lambda b: b"[]", "not a JSON object"),
        (lambda b: b'{"tinypkg": "applied"}', "its entry for tinypkg is not a table of files"),
    ],
)
def test_a_corrupt_manifest_is_named_and_refused(
    h: Callable[..., CliResult],
    tiny: Tiny,  # noqa: F811
    damage: Callable[[bytes], bytes],
    why: str,
) -> None:
    assert h("apply-patches").code == 0
    patched = installed(tiny.site)
    manifest = tiny.site / ".harness-patches" / "manifest.json"
    manifest.write_bytes(damage(manifest.read_bytes()))
    kept = manifest.read_bytes()
    for command in ("patches", "revert-patches", "apply-patches"):
        r = h(command)
        assert r.code == 2, (command, r.out, r.err)
        assert "nothing to revert" not in r.out and "edited by hand" not in r.out + r.err
        error, hint = one_error(r)
        assert error.startswith(
            f"error: venv:{tiny.root}: harness's manifest {manifest} cannot be read ({why}"
        ), error
        assert error.endswith("); nothing was done"), error
        assert f"mv {manifest} {manifest}.bad" in hint
        assert "pip install --force-reinstall --no-deps tinypkg==VERSION" in hint
        assert installed(tiny.site) == patched and manifest.read_bytes() == kept


# -- item 7: a file deleted by hand -----------------------------------------------------------


def test_a_deleted_file_reads_missing_not_as_hunks(
    h: Callable[..., CliResult],
    tiny: Tiny,  # noqa: F811
) -> None:
    tiny.path(ALPHA).unlink()
    before = installed(tiny.site)
    r = h("patches")
    assert r.code == 1, r.err
    assert f"conflicts        0001-alpha-greeting ({ALPHA} missing on the target)" in r.out
    assert "hunk" not in r.out and "expected:" not in r.out, r.out
    (report,) = json.loads(h("patches", "--json").out)
    (first,) = [p for p in report["plan"]["patches"] if p["id"] == "0001-alpha-greeting"]
    assert (first["state"], first["missing"], first["conflicts"]) == ("conflicts", [ALPHA], [])
    r = h("apply-patches")
    assert r.code == 1, r.out + r.err
    error, hint = one_error(r)
    assert (
        error
        == f"error: nothing was written: 0001-alpha-greeting: {ALPHA} is missing on the target"
    )
    assert "pip install --force-reinstall --no-deps tinypkg==1.0" in hint
    r = h("make-patch", "tinypkg", "--name", "x")
    assert r.code == 2, r.out + r.err
    error, hint = one_error(r)
    assert error == (
        f"error: {ALPHA}: missing in tinypkg 1.0 on venv:{tiny.root} (deleted by hand?); "
        "make-patch records edits to files, not deletions; no other hand edits found"
    )
    assert installed(tiny.site) == before and leftovers(tiny.site) == []


def test_a_patched_file_deleted_by_hand_reads_missing(
    h: Callable[..., CliResult],
    tiny: Tiny,  # noqa: F811
) -> None:
    assert h("apply-patches").code == 0
    tiny.path(ALPHA).unlink()
    r = h("patches")
    assert f"0001-alpha-greeting ({ALPHA} missing on the target)" in r.out, r.out
    r = h("revert-patches")
    assert r.code == 2, r.out + r.err
    error, _ = one_error(r)
    assert error == (
        f"error: venv:{tiny.root}: not reverting tinypkg: {ALPHA}: missing (deleted by hand?); "
        "--force restores the original"
    )
    assert not tiny.path(ALPHA).exists()
    r = h("revert-patches", "--force")
    assert r.code == 0, r.err
    assert tiny.path(ALPHA).read_bytes() == (FIXTURES / "tinypkg-1.0" / ALPHA).read_bytes()
