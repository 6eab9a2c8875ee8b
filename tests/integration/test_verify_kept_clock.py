""" "N of N files predate this run" said of files the run had just written (issue 44, item 3).

File times come from the filesystem's clock -- the kernel's coarse one, or a file server's --
not from the ``time.time()`` the supervisor read for ``HARNESS_STEP_STARTED``. Here the host's
clock runs 2 s ahead of the file clock (a ``sitecustomize`` shifts the supervisor's
``time.time()``, as an NFS server behind the host does): every file the step writes has an
mtime before the step's start in seconds. The extraction check's own reading
(``hidden_states.Folder.kept`` with ``step_started()``) compares with the supervisor's mark
(``HARNESS_STEP_STARTED_FILE``, stamped by the file clock) instead: 0 of 6, and files really
kept from an earlier run still count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.runs.record.verdict import describe
from harness.runs.record.verification import Verification
from harness.runs.target.remote import program_sources

REPO = Path(__file__).resolve().parents[2]
AHEAD = "import time\n_real = time.time\ntime.time = lambda: _real() + 2.0\n"
#: a step that resumes: it writes the data files not there yet
STEP = """
import json, os, sys
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)
with open(os.path.join(folder, "data_config.json"), "w") as f:
    json.dump({"layer_ids": [2]}, f)
for i in range(6):
    path = os.path.join(folder, f"data_{i}.pt")
    if not os.path.exists(path):
        open(path, "wb").write(b"x")
"""
#: the extraction check's own reading of which files the step did not write
CHECK = f"""
import json, sys
from pathlib import Path
sys.path.insert(0, {str(REPO / "probes" / "verifiers")!r})
import hidden_states as hs
n, of = hs.Folder(Path(sys.argv[1])).kept(hs.step_started())
print("HARNESS_VERIFY " + json.dumps({{"checked": of, "total": of, "failed": [],
      "kept": {{"files": n, "of": of}}}}), flush=True)
"""


def supervise(tmp_path: Path, data: Path) -> str:
    """One run of the supervisor program, its clock 2 s ahead of the file clock: the words."""
    run_dir = tmp_path / ".harness" / "runs" / f"r-clock-{time.monotonic_ns()}"
    run_dir.mkdir(parents=True)
    for name, text in program_sources().items():
        (run_dir / name).write_text(text)
    ahead = tmp_path / "ahead"
    ahead.mkdir(exist_ok=True)
    (ahead / "sitecustomize.py").write_text(AHEAD)
    spec = {"argv": [sys.executable, "-c", STEP, str(data)], "cwd": str(tmp_path), "env": {},
            "verify": [sys.executable, "-c", CHECK, str(data)], "verify_timeout": 60}  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    proc = subprocess.run(
        [sys.executable, "-B", str(run_dir / "supervisor.py"), "supervise", str(run_dir)],
        input=json.dumps(spec).encode(), env={**env, "PYTHONPATH": str(ahead)}, timeout=120,
        capture_output=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    v = Verification.from_facts(json.loads((run_dir / "verify.json").read_text()))
    assert v is not None
    return describe(v)


@pytest.mark.parametrize("kept", [0, 4])
def test_files_the_step_wrote_do_not_predate_it(tmp_path: Path, kept: int) -> None:
    data = tmp_path / "out"
    data.mkdir()
    for i in range(kept):  # an earlier run's files, an hour old: the step skips them
        (data / f"data_{i}.pt").write_bytes(b"x")
        os.utime(data / f"data_{i}.pt", (time.time() - 3600,) * 2)
    words = supervise(tmp_path, data)
    if kept:
        assert (
            words == f"verified 6/6; {kept} of 6 files predate this run (kept from an earlier one)"
        )
    else:
        assert words == "verified 6/6", words  # main: "; 6 of 6 files predate this run"
