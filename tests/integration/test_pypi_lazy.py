"""Lazy ``pypi:`` wheels (issue 26): only the members harness reads, over HTTP ranges.

The index is :mod:`tests.support.index` on loopback, with byte ranges on (``index.ranges``) or
off (the fallback to the whole wheel, said in one line); a wheel with a wrong member CRC and a
Ctrl-C mid-fetch must leave nothing in the cache.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.targets.unpack import unpack
from tests.support.cli import ctrl_c_when
from tests.support.index import Index, serve

WHEEL = "tinyidx-2.1.0-py3-none-any.whl"


def _env(index: Index, tmp_path: Path) -> dict[str, str]:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        **index.pip_env(tmp_path),
        "HARNESS_CACHE": str(tmp_path / "cache"),
        "HARNESS_HOSTS": str(hosts),
        "HOME": str(home),
        "HARNESS_SSH_PERSIST": "0",
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }


def _cli(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    cp = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    return cp.returncode, cp.stdout, cp.stderr


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root`` but ``.complete``: its mode and contents."""
    return {
        str(p.relative_to(root)): (p.stat().st_mode, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".complete"
    }


@pytest.fixture
def ranged(index: Index) -> Index:
    index.ranges = True
    return index


def test_only_the_sources_are_fetched_and_the_layout_is_the_same(
    ranged: Index, tmp_path: Path
) -> None:
    env = _env(ranged, tmp_path)
    code, out, err = _cli(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==2.1.0")
    assert code == 0, err
    assert "hello(name)" in out and "tinyidx 2.1.0" in out
    assert err == ""  # no fallback line
    wheel = ranged.root / WHEEL
    # the 2 MB blob is never fetched: a tail request (the whole small file's directory) and
    # at most one more for the sources
    assert ranged.bytes_sent < 100_000 < wheel.stat().st_size
    assert 1 <= ranged.range_requests <= 3
    cache = Path(env["HARNESS_CACHE"])
    assert not list((cache / "wheels").iterdir())  # no wheel kept, no temp folder left
    done = cache / "pypi" / "tinyidx-2.1.0"
    complete = (done / ".complete").read_text().splitlines()
    assert complete[:2] == [WHEEL, "layout 2: sources, stubs, dist-info, empty compiled modules"]
    assert complete[2].startswith("fetched lazily: ")
    assert complete[3] == f"index sha256: {hashlib.sha256(wheel.read_bytes()).hexdigest()}"
    # the same folder, file for file and mode for mode, as unpacking the whole wheel gives
    whole = tmp_path / "whole" / "tinyidx-2.1.0"
    unpack(wheel, whole)
    assert _tree(done) == _tree(whole)


def test_compiled_modules_are_empty_files_as_before(ranged: Index, tmp_path: Path) -> None:
    from tests.integration.test_pypi_download import _compiled_wheel

    root = tmp_path / "wheels-c"
    wheel = _compiled_wheel(root)
    with serve(root) as idx:
        idx.ranges = True
        env = _env(idx, tmp_path)
        code, out, err = _cli(env, "probe", "fastpkg._typed:dot", "-t", "pypi:fastpkg==1.0")
        assert code == 0, err
        assert "dot(a: float, b: float) -> float" in out
    done = Path(env["HARNESS_CACHE"]) / "pypi" / "fastpkg-1.0"
    whole = tmp_path / "whole" / "fastpkg-1.0"
    unpack(wheel, whole)
    assert _tree(done) == _tree(whole)
    assert (done / "fastpkg" / "_speed.cpython-312-x86_64-linux-gnu.so").stat().st_size == 0


def test_a_server_without_ranges_gets_the_whole_wheel_said_in_one_line(
    index: Index, tmp_path: Path
) -> None:
    env = _env(index, tmp_path)
    code, _out, err = _cli(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==2.1.0")
    assert code == 0, err
    host = index.url.split("//", 1)[1]
    assert err.splitlines() == [
        f"pypi: {host} serves no byte ranges (HTTP 200 to a range request); fetching the "
        f"whole {WHEEL}"
    ]
    cache = Path(env["HARNESS_CACHE"])
    assert [p.name for p in (cache / "wheels").iterdir()] == [WHEEL]
    assert "fetched lazily" not in (cache / "pypi" / "tinyidx-2.1.0" / ".complete").read_text()


def test_a_file_index_gets_the_whole_wheel_said_in_one_line(index: Index, tmp_path: Path) -> None:
    env = {
        **_env(index, tmp_path),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(index.root),
    }
    code, _out, err = _cli(env, "probe", "tinyidx:hello", "-t", "pypi:tinyidx==1.1.0")
    assert code == 0, err
    assert err.splitlines() == [
        "pypi: tinyidx-1.1.0-py3-none-any.whl is on a file: index, which has no byte ranges; "
        "fetching the whole wheel"
    ]
    assert index.requests == 0


def _bad_crc_wheel(folder: Path) -> Path:
    """A wheel whose module's bytes no longer match the CRC-32 its zip records."""
    folder.mkdir(parents=True)
    wheel = folder / "badcrc-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("badcrc/__init__.py", "def f(x):\n    return x\n")
        zf.writestr("badcrc-1.0.dist-info/METADATA", "Name: badcrc\nVersion: 1.0\n")
        zf.writestr("badcrc-1.0.dist-info/RECORD", "")
    data = bytearray(wheel.read_bytes())
    at = data.index(b"return x")
    data[at : at + 8] = b"return y"  # same length: only the CRC can tell
    wheel.write_bytes(bytes(data))
    return wheel


def test_a_member_with_a_bad_crc_is_refused_and_nothing_is_cached(tmp_path: Path) -> None:
    root = tmp_path / "wheels-bad"
    _bad_crc_wheel(root)
    with serve(root) as idx:
        idx.ranges = True
        env = _env(idx, tmp_path)
        code, out, err = _cli(env, "probe", "badcrc:f", "-t", "pypi:badcrc==1.0")
        assert idx.range_requests >= 1
    assert code == 2, (out, err)
    assert err.splitlines() == [
        "error: pypi: cannot unpack badcrc-1.0-py3-none-any.whl: Bad CRC-32 for file "
        "'badcrc/__init__.py'",
        "hint: retry; the index sent a damaged wheel",
    ]
    cache = Path(env["HARNESS_CACHE"])
    # no wheel, no temporary folder, no unpacked folder: only the (empty) folders themselves
    assert sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) == ["pypi", "wheels"]


@pytest.fixture
def slow_sources(tmp_path: Path) -> Iterator[Index]:
    """An index whose wheel has 2 MB of sources, served at 150 kB/s with ranges."""
    root = tmp_path / "wheels-big"
    root.mkdir()
    body = "".join(f"def f{i}(x):\n    return {i!r} * x  # {os.urandom(24).hex()}\n"
                   for i in range(24_000))  # fmt: skip
    with zipfile.ZipFile(root / "bigsrc-1.0-py3-none-any.whl", "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("bigsrc/__init__.py", body)
        zf.writestr("bigsrc-1.0.dist-info/METADATA", "Name: bigsrc\nVersion: 1.0\n")
        zf.writestr("bigsrc-1.0.dist-info/RECORD", "")
    with serve(root) as idx:
        idx.ranges = True
        idx.rate = 150_000
        yield idx


def test_ctrl_c_mid_fetch_leaves_nothing_and_says_so(slow_sources: Index, tmp_path: Path) -> None:
    env = _env(slow_sources, tmp_path)
    cache = Path(env["HARNESS_CACHE"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "probe", "bigsrc", "-t", "pypi:bigsrc==1.0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip

    def started() -> bool:  # the tail, then well into the sources, into the partial file
        if slow_sources.bytes_sent < 300_000:
            return False
        assert list((cache / "wheels").glob(".dl-*/bigsrc-1.0-py3-none-any.whl"))
        return True

    code, err = ctrl_c_when(proc, started, "the fetch")
    assert code == 130, err
    assert err.splitlines() == [
        "interrupted: nothing written: the partial download of bigsrc==1.0 was removed; "
        "see the cache with: harness cache list"
    ]
    assert [str(p.relative_to(cache)) for p in cache.rglob("*")] == ["wheels"]


def test_ctrl_c_while_members_are_written_leaves_nothing_half_unpacked(
    tmp_path: Path,
) -> None:
    """The first sources are being written (the layout's temporary folder is there) while
    the rest still arrive: Ctrl-C removes both the partial fetch and the partial folder."""
    root = tmp_path / "wheels-two"
    root.mkdir()
    body = "".join(f"def g{i}(x):\n    return x  # {os.urandom(24).hex()}\n" for i in range(20_000))
    with zipfile.ZipFile(root / "twospan-1.0-py3-none-any.whl", "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("twospan/__init__.py", "A = 1\n")
        zf.writestr("twospan/blob.bin", os.urandom(600_000))  # wider than GAP: two spans
        zf.writestr("twospan/late.py", body)
        zf.writestr("twospan-1.0.dist-info/METADATA", "Name: twospan\nVersion: 1.0\n")
        zf.writestr("twospan-1.0.dist-info/RECORD", "")
    with serve(root) as idx:
        idx.ranges, idx.rate = True, 150_000
        env = _env(idx, tmp_path)
        cache = Path(env["HARNESS_CACHE"])
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "probe", "twospan", "-t", "pypi:twospan==1.0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            start_new_session=True,
        )  # fmt: skip

        def writing() -> bool:
            return bool(list((cache / "pypi").glob(".twospan-1.0-*/twospan/__init__.py")))

        code, err = ctrl_c_when(proc, writing, "the unpack")
    assert code == 130, err
    assert err.splitlines() == [
        "interrupted: nothing written: the partial download of twospan==1.0 was removed; "
        "see the cache with: harness cache list"
    ]
    assert sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) == ["pypi", "wheels"]


def test_cache_list_and_prune_show_the_lazy_layouts_real_sizes(
    ranged: Index, tmp_path: Path
) -> None:
    """A lazy pin is its unpacked folder only (no wheel), said as such; a partial fetch's
    sparse wheel counts the blocks it holds, not the wheel's length."""
    import json

    env = _env(ranged, tmp_path)
    code, _out, err = _cli(env, "probe", "tinyidx", "-t", "pypi:tinyidx==1.0.0")
    assert code == 0, err
    cache = Path(env["HARNESS_CACHE"])
    partial = cache / "wheels" / ".dl-abc123"
    partial.mkdir()
    with open(partial / "big-1.0-py3-none-any.whl", "wb") as fh:
        fh.truncate(300_000_000)  # a 300 MB wheel, nothing fetched yet
        fh.write(b"x" * 5000)
    code, out, err = _cli(env, "cache", "list", "--json")
    assert code == 0, err
    entries = {e["name"]: e for e in json.loads(out)["entries"]}
    pin = entries["tinyidx 1.0.0"]
    wheel = (ranged.root / "tinyidx-1.0.0-py3-none-any.whl").stat().st_size
    assert pin["paths"] == [str(cache / "pypi" / "tinyidx-1.0.0")]
    assert pin["lazy"]["wheel_size"] == wheel and 0 < pin["lazy"]["fetched"] < 100_000
    du = sum(p.lstat().st_blocks * 512 for p in (cache / "pypi" / "tinyidx-1.0.0").rglob("*"))
    assert pin["size"] == du + (cache / "pypi" / "tinyidx-1.0.0").lstat().st_blocks * 512
    assert entries[".dl-abc123"]["size"] < 100_000
    code, out, err = _cli(env, "cache", "list")
    row = next(line for line in out.splitlines() if "tinyidx 1.0.0" in line)
    assert "(sources only: " in row and "of a 2.0 MB wheel)" in row, out
    code, out, err = _cli(env, "cache", "prune", "--all")
    assert code == 0, err
    assert "removed pypi tinyidx 1.0.0 (" in out and " MB)" not in out  # kB, not the wheel's MB
