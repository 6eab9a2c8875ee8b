"""Issue 35 item 8: ``make-patch`` recorded an edit that ``apply-patches`` then skipped while
saying "applied" (a CR added at the end of one line): the patch file was read with universal
newlines, so its ``+...\\r\\n`` line came back as the line it replaced. The series now carries
every byte of the edit; these edits round-trip through make-patch, revert and apply.

The target is a fresh venv with ``tinypkg`` 1.0 (``test_patches_faults``), reached as ``venv:``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import FIXTURES, installed, make_tiny
from tests.support.cli import run_cli


def _edit_line(data: bytes, n: int, new: bytes) -> bytes:
    lines = data.split(b"\n")
    lines[n] = new
    return b"\n".join(lines)


EDITS = {
    "cr-at-end": lambda d: _edit_line(d, 1, d.split(b"\n")[1] + b"\r"),
    "cr-inside": lambda d: _edit_line(d, 4, b'    """Say\rhello."""'),
    "form-feed": lambda d: _edit_line(d, 2, b"\x0c"),
    "line-separator": lambda d: _edit_line(d, 4, '    """Say\u2028hello."""'.encode()),
    "crlf-everywhere": lambda d: d.replace(b"\n", b"\r\n"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_make_patch_carries_the_edit_byte_for_byte(
    cli_env: dict[str, str], tmp_path: Path, edit: str
) -> None:
    tiny = make_tiny(tmp_path / "venv")
    patches = tmp_path / "patches"
    shutil.copytree(FIXTURES / "good", patches)
    t = ("-t", f"venv:{tiny.root}", "--patches", str(patches))
    pristine = installed(tiny.site)
    assert run_cli("apply-patches", *t, env=cli_env).code == 0
    alpha = tiny.path("tinypkg/alpha.py")
    edited = EDITS[edit](alpha.read_bytes())
    assert edited != alpha.read_bytes()
    alpha.write_bytes(edited)
    r = run_cli("make-patch", "tinypkg", "--name", "bytes", *t, env=cli_env)
    assert r.code == 0, r.out + r.err
    assert run_cli("revert-patches", *t, env=cli_env).code == 0
    assert installed(tiny.site) == pristine
    r = run_cli("patches", "--json", *t, env=cli_env)
    (report,) = json.loads(r.out)
    assert [p["state"] for p in report["plan"]["patches"]] == ["applies cleanly"] * 4
    r = run_cli("apply-patches", *t, env=cli_env)
    assert r.code == 0 and "applied: 3 file(s) written" in r.out, r.out + r.err
    assert alpha.read_bytes() == edited  # the byte the user added, not the line it replaced
    r = run_cli("patches", "--json", *t, env=cli_env)
    (report,) = json.loads(r.out)
    assert [p["state"] for p in report["plan"]["patches"]] == ["applied"] * 4
    assert report["hand_edited"] == []
