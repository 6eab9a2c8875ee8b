"""``harness matrix`` (issue 26 part 2) against a loopback index with byte ranges.

A handwritten caller (``callerx`` 1.0, written for ``calleex`` 1.0) and a callee whose ``f``
lost a parameter in 2.0: the versions come from the index (``1.0..2.0``, ``all``), each is
checked as ``harness check`` would, several at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.index import Index, _record_hash, serve

CALLEE = {
    "1.0": "def f(a, b):\n    return a + b\n",
    "1.5": "def f(a, b=0):\n    return a + b\n",
    "2.0": "def f(a):\n    return a\n",
    "2.1rc1": "def f(a):\n    return a\n",
}


def _wheel(folder: Path, name: str, version: str, module: str, requires: str = "") -> None:
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += f"Requires-Dist: {requires}\n" if requires else ""
    files = {f"{name}/__init__.py": module, f"{info}/METADATA": meta}
    rows = [f"{n},{_record_hash(t.encode())},{len(t.encode())}" for n, t in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*rows, f"{info}/RECORD,,"]) + "\n"
    with zipfile.ZipFile(folder / f"{name}-{version}-py3-none-any.whl", "w") as zf:
        for n, t in files.items():
            zf.writestr(n, t)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("matrix-wheels")
    for version, text in CALLEE.items():
        _wheel(root, "calleex", version, text)
    _wheel(root, "callerx", "1.0", "from calleex import f\n\n\ndef go():\n    return f(1, 2)\n",
           "calleex==1.0")  # fmt: skip
    with serve(root) as idx:
        idx.ranges = True
        yield idx


def _env(idx: Index, tmp_path: Path, **more: str) -> dict[str, str]:
    """A user of the loopback index: its own cache, home and (empty) inventory."""
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    return {
        **idx.pip_env(tmp_path),
        "HARNESS_CACHE": str(tmp_path / "cache"),
        "HARNESS_HOSTS": str(hosts),
        "HOME": str(tmp_path),
        **more,
    }


def _matrix(idx: Index, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = _env(idx, tmp_path, COLUMNS="200", NO_COLOR="1")
    cp = subprocess.run(
        [sys.executable, "-m", "harness", "matrix", "callerx==1.0", "--against", "calleex",
         *args],
        capture_output=True, text=True, env=env, timeout=180, check=False,
    )  # fmt: skip
    return cp.returncode, cp.stdout, cp.stderr


def test_a_range_from_the_index_is_checked_per_version(pair: Index, tmp_path: Path) -> None:
    code, out, err = _matrix(pair, tmp_path, "--versions", "1.0..2.0", "--json")
    assert code == 1, err  # errors in some version
    rows = {r["version"]: r for r in json.loads(out)["versions"]}
    assert list(rows) == ["1.0", "1.5", "2.0"]  # released, in the range, oldest first
    assert [rows[v]["errors"] for v in rows] == [0, 0, 1]
    assert rows["1.0"]["drift"] == 0  # the baseline itself
    assert all(r["failed"] is None for r in rows.values())


def test_the_table_fits_100_columns_and_says_what_failed(pair: Index, tmp_path: Path) -> None:
    code, out, err = _matrix(pair, tmp_path, "--versions", "all,", "--jobs", "2")
    assert code == 2 and "--versions all,:" in err  # a list of a non-version
    code, out, err = _matrix(pair, tmp_path, "--versions", "1.0,2.0,9.9", "--jobs", "2")
    assert code == 1, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in lines if line[:1] == "│"]
    row = {c[0]: c for c in cells if c[0]}
    assert set(row) == {"1.0", "2.0", "9.9"}
    assert row["1.0"][1:3] == ["0", "0"] and row["2.0"][1:3] == ["1", "0"]
    assert row["9.9"][1:3] == ["-", "-"]
    assert "pypi: calleex 9.9 does not exist on the index; nearest: 2.0, 2.1rc1" in " ".join(
        c[3] for c in cells if c[0] in ("9.9", "")
    )
    assert lines[-1] == "errors in 1 of 3 versions; 1 could not be checked"


def test_with_patches_and_no_series_for_the_caller_is_one_line_before_any_fetch(
    pair: Index, tmp_path: Path
) -> None:
    empty = tmp_path / "nothing"
    empty.mkdir()
    code, out, err = _matrix(pair, tmp_path, "--versions", "1.0..2.0", "--with-patches",
                             "--patches", str(empty))  # fmt: skip
    assert code == 2 and out == ""
    assert f"--with-patches: no patch series for callerx under {empty}" in err
    assert "Traceback" not in err and not (tmp_path / "cache" / "pypi").exists()


FIX = """--- a/callerx/__init__.py
+++ b/callerx/__init__.py
@@ -4,2 +4,2 @@
 def go():
-    return f(1, 2)
+    return f(1)
"""


def series(folder: Path, verified: str = 'calleex = ["2.0"]') -> Path:
    """callerx 1.0's series: one patch for calleex 2.x, a GPU run recorded on 2.0."""
    d = folder / "callerx" / "1.0"
    d.mkdir(parents=True)
    (d / "0001-f-lost-b.patch").write_text(FIX)
    (d / "series.toml").write_text(
        '[[patch]]\nfile = "0001-f-lost-b.patch"\nwhy = "f lost b in 2.0"\n'
        f'requires = {{ calleex = ">=2.0,<3" }}\n\n[verified]\n{verified}\n'
    )
    return folder


def test_the_gpu_column_is_the_series_own_record(pair: Index, tmp_path: Path) -> None:
    root = series(tmp_path / "patches")
    args = ("--versions", "1.0,1.5,2.0", "--with-patches", "--patches", str(root))
    code, out, err = _matrix(pair, tmp_path, *args, "--json")
    assert code == 0, err
    rows = {r["version"]: r for r in json.loads(out)["versions"]}
    assert {v: (r["errors"], r["gpu_verified"]) for v, r in rows.items()} == {
        "1.0": (0, False), "1.5": (0, False), "2.0": (0, True)}  # fmt: skip
    assert rows["2.0"]["patches"] == {"apply": ["0001-f-lost-b"]}
    code, out, err = _matrix(pair, tmp_path, *args)
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()]
    gpu = {c[0]: c[-1] for c in cells if c and c[0]}
    assert gpu == {"1.0": "-", "1.5": "-", "2.0": "verified"}, out
    code, out, err = _matrix(pair, tmp_path, "--versions", "1.0", "--json")
    assert json.loads(out)["versions"][0]["gpu_verified"] is None  # no series asked for


def test_a_malformed_verified_record_is_one_line_naming_the_file(
    pair: Index, tmp_path: Path
) -> None:
    root = series(tmp_path / "patches", verified='calleex = ["2.0", "two"]')
    code, out, err = _matrix(pair, tmp_path, "--versions", "2.0", "--with-patches",
                             "--patches", str(root))  # fmt: skip
    toml = root / "callerx" / "1.0" / "series.toml"
    assert code == 2 and out == "", err
    assert f"{toml}:7: verified.calleex: 'two' is not a version" in " ".join(err.split())
    assert "Traceback" not in err


def test_progress_on_a_terminal_is_one_line_and_no_download_bars(
    pair: Index, tmp_path: Path
) -> None:
    """stderr a terminal (a pty): ``checked N/3 versions``, and none of the per-version
    ``fetching ... (sources)`` bars that would draw over one another; not a terminal: nothing."""
    import os
    import pty
    import re
    import threading

    env = _env(pair, tmp_path, COLUMNS="100", TERM="xterm")
    main, side = pty.openpty()
    seen: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the other side closed
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    cp = subprocess.run(
        [sys.executable, "-m", "harness", "matrix", "callerx==1.0", "--against", "calleex",
         "--versions", "1.0..2.0", "--jobs", "3", "--json"],
        stdout=subprocess.PIPE, stderr=side, env=env, timeout=180, check=False,
    )  # fmt: skip
    os.close(side)
    reader.join(30)
    os.close(main)
    err = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(seen).decode(errors="replace"))
    assert cp.returncode == 1, err
    assert len(json.loads(cp.stdout)["versions"]) == 3  # stdout is the result alone
    assert "checked 3/3 versions" in err, err
    assert "fetching" not in err and "downloading" not in err, err
    code, out, err = _matrix(pair, tmp_path, "--versions", "1.0..2.0", "--json")
    assert code == 1 and err == "" and json.loads(out)  # not a terminal: no progress at all


@pytest.mark.wheels
def test_the_seed_pair_across_real_vllm_versions(cli_env: dict[str, str]) -> None:
    """speculators 0.3.0 was written for vLLM 0.11.0: clean there; 3 errors on 0.16.0 and 4 on
    0.17.0 (Request lost eos_token_id), 0.20.2 and 0.26.0 as installed, 0 with the series
    (0001-0010 and 0013 apply on all four, 0011 from 0.17, 0014 on 0.26, 0012 nowhere without
    transformers 5)."""
    from tests.support.cli import run_cli

    repo = Path(__file__).resolve().parents[2]
    args = ("matrix", "speculators==0.3.0", "--against", "vllm", "--versions",
            "0.11.0,0.16.0,0.17.0,0.20.2,0.26.0", "--json")  # fmt: skip
    r = run_cli(*args, env=cli_env)
    assert r.code == 1, r.err
    rows = {x["version"]: x for x in json.loads(r.out)["versions"]}
    assert {v: rows[v]["errors"] for v in rows} == {
        "0.11.0": 0, "0.16.0": 3, "0.17.0": 4, "0.20.2": 4, "0.26.0": 4}  # fmt: skip
    r = run_cli(*args, "--with-patches", "--patches", str(repo / "patches"), env=cli_env)
    assert r.code == 0, r.err
    rows = {x["version"]: x for x in json.loads(r.out)["versions"]}
    assert {v: rows[v]["errors"] for v in rows} == {
        "0.11.0": 0, "0.16.0": 0, "0.17.0": 0, "0.20.2": 0, "0.26.0": 0}  # fmt: skip
    # the series records GPU runs on 0.20.2 and 0.26.0 (bench/results/gpu-*-h200.txt)
    assert {v: rows[v]["gpu_verified"] for v in rows} == {
        "0.11.0": False, "0.16.0": False, "0.17.0": False, "0.20.2": True,
        "0.26.0": True}  # fmt: skip
    # 0011 applies from 0.17 (where eos_token_id went), not on 0.16
    eos = "0011-request-without-eos-token-id"
    assert {v: eos in rows[v]["patches"].get("apply", []) for v in rows} == {
        "0.11.0": False, "0.16.0": False, "0.17.0": True, "0.20.2": True,
        "0.26.0": True}  # fmt: skip
