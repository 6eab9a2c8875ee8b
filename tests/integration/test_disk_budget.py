"""The disk budget before a hidden-states step (issue 42, item 3), on a small filesystem: a
2 MB tmpfs mounted for the test (root only; skipped otherwise, saying so). The prepared
dataset is a real ``datasets.save_to_disk`` folder, counted by the step's own interpreter
(the verify-cpu venv), over the ``local`` target and a real sshd on loopback.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, base_env, local_harness, wait_for
from tests.support.pipvenvs import verify_cpu_venv
from tests.support.sshd import SshServer

#: 4 samples of 50 tokens: 200 tokens x 4 layers x 4096 x 2 B = 6,553,600 B
TOKENS, LAYERS = 200, "2, 16, 29, 32"


SUPPORT = Path(__file__).resolve().parents[1] / "support"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def served(name: str, python: str, prepared: Path, flags: str = "") -> str:
    """A stand-in vLLM (tests/support/fake_vllm.py) and a client step that needs it, with the
    same disk budget as gen_progress: 4 requests, 0.5 s apart."""
    server, client, port = SUPPORT / "fake_vllm.py", SUPPORT / "hs_client.py", free_port()
    return f"""
[steps.{name}_serve]
python = "{python}"
command = ["{{python}}", "{server}", "--port", "{port}", "--out", "{{out}}",
           "--startup", "0.3"{flags}]
service = {{ port = "{port}", health = "/health", ready_timeout = 30 }}

[steps.{name}]
python = "{python}"
command = ["{{python}}", "{client}", "--port", "{port}", "--n", "4", "--delay", "0.5"]
needs = ["{name}_serve"]
disk = {{ out = "{{out}}", prepared = "{prepared}", layers = "{LAYERS}", hidden = "8" }}
"""


def pipeline(python: str, small: Path, prepared: Path, model: Path) -> str:
    return f"""
[params]
hidden = "4096"
fmt = "bf16"
staging = "{small}/staging"
out = "{small}/hs"

[steps.gen]
python = "{python}"
command = ["{{python}}", "-c", "import os, sys; os.makedirs(sys.argv[1], exist_ok=True)", "{{out}}"]

[steps.gen.disk]
out = "{{out}}"
prepared = "{prepared}"
layers = "{LAYERS}"
hidden = "{{hidden}}"
format = "{{fmt}}"
staging = "{{staging}}"

[steps.gen_fill]
python = "{python}"
command = ["{{python}}", "-c", '''
import os, sys, time
os.makedirs(sys.argv[1], exist_ok=True)
for i in range(8):  # 8 x 240 KB into a 2 MB filesystem, a chunk every 0.4 s
    with open(os.path.join(sys.argv[1], "hs_%d.bin" % i), "wb") as f:
        f.write(bytes(240_000))
    time.sleep(0.4)
time.sleep(1.5)
''', "{{out}}"]
disk = {{ out = "{{out}}", prepared = "{prepared}", layers = "{LAYERS}", hidden = "8" }}

[steps.gen_progress]
python = "{python}"
command = ["{{python}}", "-c", '''
import os, sys, time
os.makedirs(sys.argv[1], exist_ok=True)
for i in range(4):  # one file per prepared sample: 50 tokens x 4 layers x 8 x 2 B
    time.sleep(0.6)
    with open(os.path.join(sys.argv[1], "hs_%d.safetensors" % i), "wb") as f:
        f.write(bytes(3200))
time.sleep(1.0)
''', "{{out}}"]
disk = {{ out = "{{out}}", prepared = "{prepared}", layers = "{LAYERS}", hidden = "8" }}

{served("gen_served", python, prepared)}
{served("gen_unmetered", python, prepared, ', "--no-metrics"')}
[steps.gen_model]
python = "{python}"
command = ["{{python}}", "-c", "pass"]
disk = {{ out = "{{out}}", prepared = "{prepared}", layers = "{LAYERS}", model = "{model}" }}
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path, Path]:
    root = tmp_path_factory.mktemp("disk")
    small = root / "small"
    small.mkdir()
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(small)],
                         capture_output=True, text=True, check=False)  # fmt: skip
    if got.returncode != 0:
        pytest.skip(f"a 2 MB tmpfs cannot be mounted here (not root?): {got.stderr.strip()}")
    python = str(verify_cpu_venv().python)
    prepared = root / "prepared"
    code = ("import sys; from datasets import Dataset; Dataset.from_dict({'input_ids': "
            "[[1] * 50] * 4, 'loss_mask': [[1] * 50] * 4}).save_to_disk(sys.argv[1])")  # fmt: skip
    subprocess.run([python, "-c", code, str(prepared)], check=True, capture_output=True)
    model = root / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"text_config": {"hidden_size": 4096}}))
    yield python, small, prepared, model
    subprocess.run(["umount", str(small)], check=False)


@pytest.fixture(params=["local", pytest.param("ssh", marks=pytest.mark.ssh)])
def box(
    request: pytest.FixtureRequest, tmp_path: Path, made: tuple[str, Path, Path, Path]
) -> Iterator[Harness]:
    text = pipeline(*made)
    shutil.rmtree(made[1] / "hs", ignore_errors=True)  # the small filesystem empty for each
    if request.param == "local":
        yield local_harness(tmp_path, text)
        return
    sshd: SshServer = request.getfixturevalue("sshd")
    workdir = tmp_path / "work"
    workdir.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=sys.executable, workdir=str(workdir)))
    (tmp_path / "pipeline.toml").write_text(text)
    env = base_env(tmp_path) | {"HARNESS_HOSTS": str(hosts),
                                "HARNESS_RUN_GPU_DEVICES": str(workdir / "no-gpu*")}  # fmt: skip
    yield Harness(tmp_path, env, "box", workdir)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_step_that_will_not_fit_is_refused_with_both_numbers(box: Harness) -> None:
    r = box("run", "gen", "-t", box.target)
    assert r.code != 0
    said = flat(r.err)
    assert "gen will write 6.6 MB to" in said, r.err
    assert f"(4 samples, {TOKENS} tokens x 4 layers x 4096 x bf16); 2.1 MB free there: it will " \
        "not fit (4.5 MB short)" in said  # fmt: skip
    assert "--force runs it anyway" in said
    assert "Traceback" not in r.err
    assert not (box.workdir / ".harness" / "runs").exists() or not list(
        (box.workdir / ".harness" / "runs").glob("gen-*")
    )


def test_report_shows_the_estimate_and_says_not_ready_when_it_will_not_fit(box: Harness) -> None:
    r = box("report", "gen", "-t", box.target)
    said = flat(r.out)
    assert "gen will write 6.6 MB to" in said, r.out + r.err
    assert "2.1 MB free there: it will not fit (4.5 MB short)" in said
    assert "not ready" in said
    fits = box("report", "gen", "-t", box.target, "--set", "hidden=8", "--format", "json")
    assert fits.code == 0, fits.err
    budget = json.loads(fits.out)["step"]["budget"]
    assert (budget["samples"], budget["tokens"], budget["bytes"]) == (4, TOKENS, 12_800)
    words = flat(box("report", "gen", "-t", box.target, "--set", "hidden=8").out)
    assert f"step gen will write 12.8 KB to {budget['out']} (4 samples, {TOKENS} tokens" in words


def test_force_runs_it_anyway_and_says_so(box: Harness) -> None:
    r = box("run", "gen", "-t", box.target, "--force")
    assert r.code == 0, r.out + r.err
    assert "launching anyway (--force)" in flat(r.err)


def test_fp8_counts_its_codes_and_scales_and_a_fitting_step_runs(box: Harness) -> None:
    fp8 = box("run", "gen", "-t", box.target, "--set", "fmt=fp8")
    assert fp8.code != 0
    # 200 x 4 x 4096 x 1 B of codes + 200 x 4 x 4 B of float32 scales = 3,280,000 B
    assert "gen will write 3.3 MB to" in flat(fp8.err), fp8.err
    fits = box("run", "gen", "-t", box.target, "--set", "hidden=8")
    assert fits.code == 0, fits.out + fits.err
    assert "✓ disk: will write 12.8 KB to" in flat(fits.err)
    # counted once, by the launch's disk gate: the run's own review (review.json) skips it
    (ran,) = (box.workdir / ".harness" / "runs").glob("gen-*")
    step = json.loads((ran / "review.json").read_text())["step"]
    assert step["disk"] and "budget" not in step and "budget_error" not in step, step


def test_a_staging_folder_on_another_filesystem_is_a_warning(box: Harness, tmp_path: Path) -> None:
    r = box("run", "gen", "-t", box.target, "--set", "hidden=8", "--set",
            f"staging={tmp_path}/staging")  # fmt: skip
    assert r.code == 0, r.out + r.err
    assert f"the staging folder {tmp_path}/staging is on another filesystem than" in flat(r.err)
    assert "copied, not moved" in r.err


def test_the_hidden_size_is_read_from_the_models_config(box: Harness) -> None:
    r = box("run", "gen_model", "-t", box.target)
    assert r.code != 0
    assert "gen_model will write 6.6 MB to" in flat(r.err), r.err


def test_the_output_filesystem_at_90_percent_is_said_with_its_fill_rate(box: Harness) -> None:
    r = box("run", "gen_fill", "-t", box.target)
    assert r.code == 0, r.out + r.err
    said = flat(r.out)
    m = re.search(r"harness: \S+/hs's filesystem is (\d+)% full: ([\d.]+) MB left, filling at "
                  r"([\d.]+) MB/s \(full in ~\d+ s\)", said)  # fmt: skip
    assert m is not None, r.out
    assert int(m[1]) >= 90 and float(m[2]) < 0.25 and 0.1 < float(m[3]) < 2.0, m.groups()
    logs = box("logs", "gen_fill", "-t", box.target)
    assert "filesystem is" in logs.out


def test_progress_lines_say_samples_tokens_per_second_elapsed_eta_and_bytes(
    box: Harness,
) -> None:
    r = box("run", "gen_progress", "-t", box.target, HARNESS_RUN_PROGRESS_S="0.5")
    assert r.code == 0, r.out + r.err
    line = (r"harness: progress (\d)/4 samples · ([\d,]+) tokens/s · elapsed 0:00:0\d · "
            r"ETA (\S+) · ([\d.]+) MB written")  # fmt: skip
    got = re.findall(line, r.out)
    assert got, r.out
    done = [int(g[0]) for g in got]
    assert done == sorted(done) and done[-1] == 4 and any(0 < d < 4 for d in done), got
    partial = next(g for g in got if 0 < int(g[0]) < 4)
    assert int(partial[1].replace(",", "")) > 0 and partial[2] != "?", partial
    assert got[-1][3] == "0.0" or float(got[-1][3]) <= 0.02  # 4 x 3,200 B
    logs = box("logs", "gen_progress", "-t", box.target)
    assert "harness: progress 4/4 samples" in logs.out


def test_runs_shows_a_running_steps_progress(box: Harness) -> None:
    r = box("run", "gen_progress", "-t", box.target, "--detach", HARNESS_RUN_PROGRESS_S="0.3")
    assert r.code == 0, r.out + r.err
    seen: list[str] = []

    def shown() -> bool:
        table = flat(box("runs", "-t", box.target).out)
        seen.append(table)
        return bool(re.search(r"gen_progress running · [1-3]/4 samples · [\d,]+ tokens/s · "
                              r"ETA \d:\d\d:\d\d · [\d.]+ KB written", table))  # fmt: skip

    wait_for(shown, timeout=30, what="progress in `runs`")
    as_json = json.loads(box("runs", "-t", box.target, "--json").out)
    (row,) = [x for x in as_json if x["record"]["step"] == "gen_progress"]
    assert row.get("progress") is None or row["progress"]["total"] == 4


def test_a_served_steps_progress_adds_what_its_server_counts(box: Harness) -> None:
    """The step's progress lines carry its service's own /metrics: prompt tokens per second
    since the last look, requests running and waiting (issue 42, item 4)."""
    r = box("run", "gen_served", "-t", box.target, HARNESS_RUN_PROGRESS_S="0.4")
    assert r.code == 0, r.out + r.err
    line = (
        r"harness: progress (\d)/4 samples · [\d,]+ tokens/s · elapsed \S+ · ETA \S+ · "
        r"\S+ MB written · server ([\d,]+) prompt tokens/s, (\d+) running, 0 waiting"
    )
    got = re.findall(line, r.out)
    assert got, r.out
    assert any(int(g[1].replace(",", "")) > 0 for g in got), got  # 50 tokens a request


def test_a_server_without_metrics_leaves_the_files_progress_alone(box: Harness) -> None:
    r = box("run", "gen_unmetered", "-t", box.target, HARNESS_RUN_PROGRESS_S="0.4")
    assert r.code == 0, r.out + r.err
    assert re.search(r"harness: progress \d/4 samples", r.out), r.out
    assert "· server" not in r.out
