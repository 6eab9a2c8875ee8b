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
