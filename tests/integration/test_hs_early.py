"""The extraction check reads what lands while the step runs (issue 42, item 6): started with
the step, it waits at its gate for ``go`` and meanwhile profiles each settled file -- and a
file written again after that is judged as it is at ``go``, never by its earlier profile.

The real check (``probes/verifiers/hidden_states.py``) on the CPU, with a real gate (a pipe
named by ``HARNESS_VERIFY_GATE``, as the supervisor makes it), on the tiny Llama output of
``tests/support/faultdata.py`` (48 hs_{i}.safetensors, ids [2, 4, 5, 8] of 8 layers).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.faultout import ENV
from tests.support.pipvenvs import verify_cpu_venv

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "probes" / "verifiers" / "hidden_states.py"
LLAMA = ["--layer-ids", "2,4,5,8", "--capture", "input", "--device", "cpu"]
#: hs_1: not among the 16 samples compared at every layer (spread(48, 16)): its upper
#: layers are judged by their statistics alone
PLANTED = 1

SWAP = """
import sys
from safetensors.torch import load_file, save_file
path = sys.argv[1]
d = load_file(path)
hs = d["hidden_states"].clone()
hs[:, [2, 3]] = hs[:, [3, 2]]  # layers 5 and 8 swapped, in place (same inode, same size)
save_file({**d, "hidden_states": hs.contiguous()}, path)
"""


@pytest.fixture
def made(faultdata_out: Path) -> tuple[Path, Path]:
    return verify_cpu_venv().python, faultdata_out


def check(python: Path, out: Path, data: Path, plant: bool) -> tuple[dict[str, Any], str]:
    """The check started at its gate beside 48 landed files; once it says it has read their
    statistics, hs_1 is rewritten (when ``plant``) and ``go`` sent at once -- within the
    check's settle time (30 s; the landed files were last written a minute ago), so it does
    not read the rewritten file before ``go``."""
    read, write = os.pipe()
    argv = [str(python), str(CHECK), "--data", str(data), "--model", str(out / "model"),
            "--prepared", str(out / "prepared"), *LLAMA, "--settle", "30"]  # fmt: skip
    proc = subprocess.Popen(argv, env={**ENV, "HARNESS_VERIFY_GATE": str(read)},
                            pass_fds=(read,), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=CHECK.parent)  # fmt: skip
    os.close(read)
    said, deadline = b"", time.monotonic() + 300
    assert proc.stderr is not None
    while b"statistics of 48 files read while the step runs" not in said:
        assert time.monotonic() < deadline and proc.poll() is None, said.decode()[-3000:]
        if select.select([proc.stderr], [], [], 1.0)[0]:
            said += os.read(proc.stderr.fileno(), 65536)
    if plant:
        subprocess.run([str(python), "-c", SWAP, str(data / f"hs_{PLANTED}.safetensors")],
                       check=True, env=ENV)  # fmt: skip
    os.write(write, b"go\n")
    os.close(write)
    stdout, stderr = proc.communicate(timeout=600)
    lines = [x for x in stdout.decode().splitlines() if x.startswith("HARNESS_VERIFY ")]
    assert lines, (stdout + said + stderr).decode()[-3000:]
    return json.loads(lines[-1].split(" ", 1)[1]), stdout.decode()


def landed(out: Path, tmp_path: Path) -> Path:
    data = tmp_path / "hs"
    data.mkdir()
    ago = time.time() - 60
    for f in sorted((out / "clean").glob("hs_*.safetensors")):
        shutil.copy(f, data / f.name)
        os.utime(data / f.name, (ago, ago))  # settled
    return data


def test_statistics_read_while_the_step_runs_are_reused_when_the_files_are_unchanged(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    python, out = made
    report, _ = check(python, out, landed(out, tmp_path), plant=False)
    assert report["failed"] == [], report["failed"]
    assert report["early"]["files"] == 48, report.get("early")


def test_a_file_written_again_after_its_early_read_is_judged_as_it_is_at_go(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    python, out = made
    report, said = check(python, out, landed(out, tmp_path), plant=True)
    assert report["early"]["files"] == 47, report.get("early")  # hs_1 read again after go
    failed = {f["sample"]: f for f in report["failed"]}
    assert set(failed) == {f"hs_{PLANTED}"}, report["failed"]
    assert failed[f"hs_{PLANTED}"]["check"] == "profile", failed
    assert (
        "layer order: 0% of rows grow in norm from layer 5 to 8 here"
        in failed[f"hs_{PLANTED}"]["why"]
    )
    assert f"wrong: hs_{PLANTED}: " in said
