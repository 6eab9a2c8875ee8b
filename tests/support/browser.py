"""Headless Chromium (Debian's package) for tests that read what a person would see."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

#: No network features: this machine's network is closed and the page must be self-contained.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
)


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail(
            "chromium not found: install Debian's `chromium` (bash .ci/run does)", pytrace=False
        )
    return exe


def dump_dom(page: Path) -> str:
    """The DOM after Chromium rendered ``page`` (a file:// URL, no network)."""
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        cp = subprocess.run(
            [
                chromium(),
                *FLAGS,
                f"--user-data-dir={profile}",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert cp.returncode == 0, cp.stderr[-2000:]
    return cp.stdout


def inner_text(page: Path) -> str:
    """What a reader sees: the rendered DOM with tags stripped."""
    import html
    import re

    dom = dump_dom(page)
    dom = re.sub(r"<style.*?</style>", "", dom, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", dom))
