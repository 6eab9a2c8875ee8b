"""The ``pypi:`` target's downloads against a real index on loopback (item 5, CLI details).

pip really downloads from :mod:`tests.support.index` (handwritten ``tinyidx`` wheels over
HTTP), so these tests need no network and can make a download slow on purpose.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import ctrl_c_when
from tests.support.index import Index

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


@pytest.fixture
def env(index: Index, tmp_path: Path) -> dict[str, str]:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    home = tmp_path / "home"
    home.mkdir()
    return {
        **index.pip_env(tmp_path),
        "HARNESS_CACHE": str(tmp_path / "cache"),
        "HARNESS_HOSTS": str(hosts),
        "HOME": str(home),
        "HARNESS_SSH_PERSIST": "0",
    }


def _cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    cp = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True, text=True, env={**env, "COLUMNS": "200", "NO_COLOR": "1"},
        timeout=120, check=False,
    )  # fmt: skip
    return cp.returncode, cp.stdout, cp.stderr


def test_a_pin_without_version_names_the_latest(env: dict[str, str]) -> None:
    code, out, err = _cli(env, "probe", "tinyidx", "-t", "pypi:tinyidx")
    assert code == 2, (out, err)
    assert (
        "error: pypi:tinyidx needs a version; the latest is 3.0.0: pypi:tinyidx==3.0.0" in err
    )  # the release, not the 3.1.0rc1 pre-release
    assert "Traceback" not in err
    assert not (Path(env["HARNESS_CACHE"]) / "wheels").exists() or not list(
        (Path(env["HARNESS_CACHE"]) / "wheels").glob("*.whl")
    )


def test_a_version_that_does_not_exist_names_the_nearest(env: dict[str, str]) -> None:
    code, out, err = _cli(env, "probe", "tinyidx", "-t", "pypi:tinyidx==1.5.0")
    assert code == 2, (out, err)
    lines = err.splitlines()
    assert lines[0] == (
        "error: pypi: tinyidx 1.5.0 does not exist on the index; nearest: 1.0.0, 1.1.0, 2.0.0, "
        "2.1.0"
    )
    assert lines[1:] == ["hint: pin one of them, e.g. pypi:tinyidx==3.0.0 (the latest)"]


def test_an_existing_version_downloads_and_probes(env: dict[str, str]) -> None:
    code, out, err = _cli(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==2.1.0")
    assert code == 0, err
    assert "hello(name)" in out and "tinyidx 2.1.0" in out
    wheels = Path(env["HARNESS_CACHE"]) / "wheels"
    assert [p.name for p in wheels.iterdir()] == ["tinyidx-2.1.0-py3-none-any.whl"]


def _on_a_terminal(env: dict[str, str], *args: str, timeout: float = 60) -> tuple[int, str]:
    """Run harness with its stdout and stderr on a pseudo-terminal; (exit code, screen text)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        stdin=follower, stdout=follower, stderr=follower, close_fds=True,
        env={**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"},
    )  # fmt: skip
    os.close(follower)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(leader)
    code = proc.wait(10)
    return code, ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def test_a_long_download_shows_its_size_and_rate(env: dict[str, str], index: Index) -> None:
    index.rate = 800_000  # 2 MB in about 2.5 s
    code, screen = _on_a_terminal(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==1.0.0")
    assert code == 0, screen
    assert "downloading tinyidx==1.0.0" in screen
    assert re.search(r"\d+(\.\d+)?/2\.0 MB", screen), screen  # done / total
    assert re.search(r"\d+(\.\d+)? (kB|MB)/s", screen), screen  # the rate
    assert "hello(name)" in screen


def test_no_progress_bar_off_a_terminal(env: dict[str, str], index: Index) -> None:
    index.rate = 4_000_000
    code, _out, err = _cli(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==1.1.0")
    assert code == 0, err
    assert "downloading" not in err and "MB/s" not in err


def test_ctrl_c_mid_download_leaves_nothing_and_says_so(env: dict[str, str], index: Index) -> None:
    """Item 5 of issue 10: one line, exit 130, and no partial file anywhere in the cache."""
    index.rate = 150_000  # about 13 s: plenty of time to strike
    cache = Path(env["HARNESS_CACHE"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "probe", "tinyidx", "-t", "pypi:tinyidx==1.0.0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**env, "COLUMNS": "200", "NO_COLOR": "1"}, start_new_session=True,
    )  # fmt: skip

    def started() -> bool:
        return any(p.stat().st_size > 100_000 for p in cache.rglob("*.whl"))

    code, err = ctrl_c_when(proc, started, "the download")  # harness and pip alike
    assert code == 130, err
    host = index.url.split("//", 1)[1]
    assert err.splitlines() == [
        # this index serves no byte ranges (issue 26): the whole wheel, said in one line
        f"pypi: {host} serves no byte ranges (HTTP 200 to a range request); fetching the "
        "whole tinyidx-1.0.0-py3-none-any.whl",
        "interrupted: nothing written: the partial download of tinyidx==1.0.0 was removed; "
        "see the cache with: harness cache list",
    ]
    assert [str(p.relative_to(cache)) for p in cache.rglob("*")] == ["wheels"]


def test_cache_list_and_prune(env: dict[str, str]) -> None:
    """``harness cache list|prune``: sizes, last use, and only what was not used lately goes."""
    for version in ("1.0.0", "2.1.0"):
        code, _out, err = _cli(env, "probe", "tinyidx", "-t", f"pypi:tinyidx=={version}")
        assert code == 0, err
    cache = Path(env["HARNESS_CACHE"])
    old = time.time() - 40 * 86400
    for p in [
        cache / "wheels" / "tinyidx-1.0.0-py3-none-any.whl",
        cache / "pypi" / "tinyidx-1.0.0",
    ]:
        for q in [p, *p.rglob("*")]:
            os.utime(q, (old, old), follow_symlinks=False)
    code, out, err = _cli(env, "cache", "list")
    assert code == 0, err
    rows = {line.split("│")[2].strip(): line for line in out.splitlines() if "│ pypi" in line}
    assert set(rows) == {"tinyidx 1.0.0", "tinyidx 2.1.0"}
    assert "2.0 MB" in rows["tinyidx 1.0.0"] and "40 days ago" in rows["tinyidx 1.0.0"]
    assert "just now" in rows["tinyidx 2.1.0"] or "minute" in rows["tinyidx 2.1.0"]
    code, out, err = _cli(env, "cache", "list", "--json")
    assert {e["name"] for e in json.loads(out)["entries"]} >= {"tinyidx 1.0.0", "tinyidx 2.1.0"}

    code, out, _ = _cli(env, "cache", "prune", "--dry-run")
    assert code == 0 and "would remove pypi tinyidx 1.0.0" in out and "2.1.0" not in out
    assert (cache / "pypi" / "tinyidx-1.0.0").exists()
    code, out, err = _cli(env, "cache", "prune")
    assert code == 0, err
    assert "removed pypi tinyidx 1.0.0" in out and "freed 2.0 MB" in out
    assert not (cache / "pypi" / "tinyidx-1.0.0").exists()
    assert not (cache / "wheels" / "tinyidx-1.0.0-py3-none-any.whl").exists()
    assert (cache / "pypi" / "tinyidx-2.1.0" / ".complete").exists()
    code, _out, err = _cli(env, "cache", "prune", "--older-than", "-1")
    assert code == 2 and "--older-than -1: give a number of days >= 0" in err


def _compiled_wheel(folder: Path) -> Path:
    """A wheel with a compiled module and its stub, as numpy's and scikit-learn's are."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "fastpkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("fastpkg/__init__.py", "from fastpkg._speed import *\n")
        zf.writestr("fastpkg/_speed.cpython-312-x86_64-linux-gnu.so", b"\x7fELF" + b"\0" * 4096)
        zf.writestr("fastpkg/_typed.cpython-312-x86_64-linux-gnu.so", b"\x7fELF" + b"\0" * 64)
        zf.writestr("fastpkg/_typed.pyi", "def dot(a: float, b: float) -> float: ...\n")
        zf.writestr("fastpkg-1.0.dist-info/METADATA", "Name: fastpkg\nVersion: 1.0\n")
        zf.writestr("fastpkg-1.0.dist-info/RECORD", "")
    return wheel


def test_compiled_modules_are_kept_as_names_and_older_unpacks_are_redone(
    env: dict[str, str],
) -> None:
    """A pypi: target keeps a compiled module as an empty file (it exists, unreadable) and its
    stub as text; a folder unpacked before that layout is unpacked again from its wheel."""
    cache = Path(env["HARNESS_CACHE"])
    _compiled_wheel(cache / "wheels")
    spec = "pypi:fastpkg==1.0"
    code, out, err = _cli(env, "probe", "fastpkg._typed:dot", "-t", spec)
    assert code == 0, err
    assert "dot(a: float, b: float) -> float" in out and "fastpkg/_typed.pyi" in out
    done = cache / "pypi" / "fastpkg-1.0"
    so = done / "fastpkg" / "_speed.cpython-312-x86_64-linux-gnu.so"
    assert so.is_file() and so.stat().st_size == 0
    code, out, err = _cli(env, "probe", "fastpkg._speed", "-t", spec)
    assert code == 2 and "fastpkg._speed is a compiled extension" in err, (out, err)

    # as an older harness left it: no compiled modules, a one-line marker
    so.chmod(0o644)
    so.unlink()
    (done / ".complete").chmod(0o644)
    (done / ".complete").write_text("fastpkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl\n")
    code, out, err = _cli(env, "probe", "fastpkg._typed:dot", "-t", spec)
    assert code == 0, err
    assert so.is_file() and "layout 2" in (done / ".complete").read_text()
