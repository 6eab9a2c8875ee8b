"""A service step's life cycle through ``harness run``: a real server process on the CPU.

vLLM's real ``vllm serve`` cannot run here (the tests' CPU vLLM venv is the CUDA wheel on CPU
torch, for its config classes only), so the server is ``tests/support/fake_vllm.py``: the
same endpoints and one hidden-states file per request, with switches to exit or hang before
it is ready. The client is ``tests/support/hs_client.py``. Start -> ready -> the dependent
step -> the service stopped after it; ``--keep-service`` then a reuse; a server that exits
or hangs before it is ready; ``harness stop`` mid-generate; a dropped SSH link mid-run.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, base_env, local_harness, marked, wait_for
from tests.support.sshd import SshServer

SUPPORT = Path(__file__).resolve().parents[1] / "support"
SERVER, CLIENT = SUPPORT / "fake_vllm.py", SUPPORT / "hs_client.py"


def pipeline(port: int) -> str:
    serve = f'["{{python}}", "{SERVER}", "--port", "{{port}}", "--out", "{{out}}"'
    client = (
        f'["{{python}}", "{CLIENT}", "--port", "{{port}}", "--n", "{{n}}", "--delay", "{{delay}}"]'
    )
    return f"""
[params]
port = {port}
out = "{{workdir}}/hs"
n = 6
delay = 0.02

[steps.serve]
command = {serve}, "--startup", "1.0"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.serve_bad]
command = {serve}, "--exit-before-ready", "--startup", "0.3"]
service = {{ port = "{{port}}", ready_timeout = 30 }}

[steps.serve_hang]
command = {serve}, "--hang"]
service = {{ port = "{{port}}", ready_timeout = 2 }}

[steps.serve_500]
command = {serve}, "--startup", "0.3", "--fail-after", "2"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.generate]
command = {client}
needs = ["serve"]

[steps.generate_500]
command = {client}
needs = ["serve_500"]

[steps.generate_bad]
command = {client}
needs = ["serve_bad"]

[steps.generate_hang]
command = {client}
needs = ["serve_hang"]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cleanup(h: Harness) -> None:
    for run in (h.workdir / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Harness]:
    h = local_harness(tmp_path, pipeline(free_port()))
    yield h
    cleanup(h)


def runs_of(h: Harness) -> dict[str, dict]:
    r = h("runs", "-t", h.target, "--json")
    assert r.code == 0, r.err
    return {x["record"]["step"] + ":" + x["record"]["id"]: x for x in json.loads(r.out)}


def one(h: Harness, step: str) -> dict:
    (row,) = [v for k, v in runs_of(h).items() if k.split(":")[0] == step]
    return row


def port_of(h: Harness) -> int:
    return int(re.search(r"port = (\d+)", (h.cwd / "pipeline.toml").read_text()).group(1))  # type: ignore[union-attr]


def test_the_service_starts_gets_ready_serves_the_step_and_is_stopped_after(
    local: Harness,
) -> None:
    r = local("run", "generate", "-t", "local")
    assert r.code == 0, r.out + r.err
    port = port_of(local)
    serve, gen = one(local, "serve"), one(local, "generate")
    assert re.search(rf"service serve: {serve['record']['id']} ready on :{port} in \d", r.err)
    assert "Started server process" in r.out  # its log streamed while it started
    assert "sample 5: hidden states in" in r.out
    assert len(list((local.workdir / "hs").glob("hs_*.safetensors"))) == 6
    assert gen["record"]["services"] == [
        {"step": "serve", "run_id": serve["record"]["id"], "keep": False}
    ]
    assert gen["label"] == "succeeded · unverified"
    local.status(serve["record"]["id"])
    assert one(local, "serve")["label"] == f"service :{port} stopped"
    assert marked(serve["record"]["id"]) == []
    ready = json.loads((local.run_dir(serve["record"]["id"]) / "ready.json").read_text())
    assert ready["url"] == f"http://127.0.0.1:{port}/health" and ready["seconds"] >= 1.0
    table = local("runs", "-t", "local")
    assert re.search(rf"serve-\S+\s+serve\s+service :{port} stopped", table.out), table.out


def test_keep_service_leaves_it_ready_and_the_next_run_reuses_then_stops_it(
    local: Harness,
) -> None:
    first = local("run", "generate", "-t", "local", "--keep-service")
    assert first.code == 0, first.out + first.err
    serve = one(local, "serve")
    sid, port = serve["record"]["id"], port_of(local)
    assert serve["label"] == f"service :{port} ready" and marked(sid)
    listing = local("runs", "-t", "local")
    assert re.search(rf"{sid}\s+serve\s+service :{port} ready", listing.out), listing.out

    second = local("run", "generate", "-t", "local")
    assert second.code == 0, second.out + second.err
    assert f"service serve: reusing {sid}, ready on :{port}" in second.err
    assert "Started server process" not in second.out  # no second server
    assert len([k for k in runs_of(local) if k.startswith("serve:")]) == 1
    local.status(sid)
    assert one(local, "serve")["label"] == f"service :{port} stopped"
    assert marked(sid) == []
    assert len(list((local.workdir / "hs").glob("hs_*.safetensors"))) == 12


def test_a_server_that_exits_before_it_is_ready_fails_the_run_with_its_own_error(
    local: Harness,
) -> None:
    r = local("run", "generate_bad", "-t", "local")
    assert r.code != 0
    said = r.out + r.err
    assert "ERROR: ValueError: the extract_hidden_states method needs" in said
    sid = one(local, "serve_bad")["record"]["id"]
    assert re.search(
        rf"generate_bad was not launched: the service {sid} service :\d+ failed \(1\): "
        r"the server exited before it was ready; its last lines: .*ERROR: ValueError",
        r.err,
    ), r.err
    assert "Traceback" not in r.err
    assert not [k for k in runs_of(local) if k.startswith("generate_bad:")]
    assert marked(sid) == []


def test_a_step_failed_by_its_servers_500s_shows_the_servers_own_error_lines(
    local: Harness,
) -> None:
    """vLLM 0.24.0's engine core died at its first DeepSeek request (the H200): the client
    saw 500s; the step's failure carries the server's own lines, not only the client's."""
    r = local("run", "generate_500", "-t", "local")
    assert r.code != 0
    sid = one(local, "serve_500")["record"]["id"]
    assert f"harness: service {sid}: EngineCore encountered a fatal error." in r.out
    assert f"harness: service {sid}: RuntimeError: The expanded size of the tensor (4)" in r.out
    assert "Traceback (most recent" not in "\n".join(
        x for x in r.out.splitlines() if x.startswith("harness: service")
    )
    log = local.run_dir(one(local, "generate_500")["record"]["id"]) / "log"
    assert f"harness: service {sid}: RuntimeError:" in log.read_text()
    # the failure summary reads the server's line: the missing layer in words, what to run
    said = " ".join(r.err.split())
    assert f"RuntimeError (service {sid}): The expanded size of the tensor (4)" in said, r.err
    assert "returned 3 hidden states per token for 4 layer ids: the last one of layer_ids" in said
    assert "harness patches -t local" in said
    assert marked(sid) == []  # stopped after the step all the same


def test_a_server_that_hangs_is_failed_at_its_ready_timeout_and_its_tree_ended(
    local: Harness,
) -> None:
    r = local("run", "generate_hang", "-t", "local")
    assert r.code != 0
    row = one(local, "serve_hang")
    sid = row["record"]["id"]
    assert row["state"] == "failed", row
    assert "not ready within 2s (ready_timeout)" in row["label"], row["label"]
    assert "not ready within 2s" in r.err
    assert marked(sid) == []  # the SIGTERM-deaf worker in its own session too
    assert not [k for k in runs_of(local) if k.startswith("generate_hang:")]


def test_stop_mid_generate_stops_the_step_and_the_service(local: Harness) -> None:
    r = local("run", "generate", "-t", "local", "--detach", "--set", "n=400", "--set",
              "delay=0.05")  # fmt: skip
    assert r.code == 0, r.out + r.err
    gid, sid = one(local, "generate")["record"]["id"], one(local, "serve")["record"]["id"]
    wait_for(lambda: b"sample 3:" in (local.run_dir(gid) / "log").read_bytes())
    stop = local("stop", gid, "-t", "local")
    assert stop.code == 0, stop.out + stop.err
    # stopped by the step's supervisor as the step ended, or by the stop itself: either way
    assert re.search(rf"(stopped the service it needed, {sid}|{sid}, has ended too)", stop.out)
    assert "GPU holders remaining: none" in stop.out
    local.status(gid)
    local.status(sid)
    assert marked(gid) == [] and marked(sid) == []
    assert one(local, "serve")["label"].startswith(f"service :{port_of(local)} stopped")
    assert one(local, "generate")["state"] == "killed"


@pytest.mark.ssh
def test_a_dropped_link_changes_nothing_the_step_ends_and_stops_the_service(
    sshd: SshServer, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=sys.executable, workdir=str(workdir)))
    (tmp_path / "pipeline.toml").write_text(pipeline(free_port()))
    box = Harness(tmp_path, base_env(tmp_path) | {"HARNESS_HOSTS": str(hosts)}, "box", workdir)
    try:
        proc = box.popen("run", "generate", "-t", "box", "--set", "n=60", "--set",
                         "delay=0.05", stdout=subprocess.DEVNULL,
                         HARNESS_RUN_RECONNECT_S="0")  # fmt: skip
        runs = workdir / ".harness" / "runs"
        wait_for(lambda: any(b"sample 3:" in p.read_bytes() for p in runs.glob("generate-*/log")),
                 timeout=30)  # fmt: skip
        gid = next(runs.glob("generate-*")).name
        sid = next(runs.glob("serve-*")).name
        assert sshd.kill_sessions() >= 1
        assert proc.wait(timeout=30) == 2
        assert proc.stderr is not None
        assert f"{gid} keeps running on box" in proc.stderr.read().decode()
        status = box.status(gid, timeout=30)
        assert status["exit_code"] == 0  # every request answered: the server went on too
        assert box.status(sid)["stop_requested"] is True
        assert len(list((workdir / "hs").glob("hs_*.safetensors"))) == 60
        wait_for(lambda: marked(sid) == [] and marked(gid) == [])
        assert one(box, "serve")["label"].startswith("service :")
        assert one(box, "serve")["label"].endswith("stopped")
    finally:
        cleanup(box)
