"""Probes sent as this interpreter's bytecode run exactly as from source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.probe_files import boot_source
from harness.probe_runner import build_payload, parse_envelope

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"


def _run(compiled: bool) -> dict:
    args = {"refs": [["calleepkg.core", "Record"]], "paths": [str(SITE)]}
    cp = subprocess.run(
        [sys.executable, "-c", boot_source()],
        input=build_payload("callsites", args, compiled=compiled),
        capture_output=True,
        check=True,
    )
    env = parse_envelope(cp.stdout)
    assert env is not None and env.ok, cp.stderr
    return env.data


def test_bytecode_payload_gives_the_same_answer_without_the_source() -> None:
    payload = build_payload("callsites", {"refs": []}, compiled=True)
    assert b"def scan_fits" not in payload  # no source travels
    assert _run(compiled=True) == _run(compiled=False)


def test_kept_bytecode_is_shipped_only_while_its_source_is_unchanged(tmp_path: Path) -> None:
    """The payload takes a probe module's marshalled code from ``__pycache__`` as is; an
    edited module (another mtime or size) must never travel as its old code."""
    import importlib.util
    import os
    import py_compile

    from harness.probe_files import kept_code

    src = tmp_path / "mod.py"
    src.write_text("X = 1\n")
    os.utime(src, (1_700_000_000, 1_700_000_000))
    pyc = py_compile.compile(str(src), invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    assert pyc == importlib.util.cache_from_source(str(src))
    assert kept_code(str(src)) == Path(pyc).read_bytes()[16:]
    src.write_text("X = 22\n")  # edited: the kept code is stale
    os.utime(src, (1_700_000_100, 1_700_000_100))
    assert kept_code(str(src)) is None
    (tmp_path / "plain.py").write_text("Y = 1\n")  # never compiled: nothing kept
    assert kept_code(str(tmp_path / "plain.py")) is None
