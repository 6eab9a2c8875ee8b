"""A service several runs share, and the port it listens on (issue 42, items 1-2), over the
``local`` target and a real sshd on loopback: nothing already on the port is taken for the
new server; a non-HTTP answer is named; the last live user stops it, ``stop`` names the
users; a server started for a step that never launched stops itself; Ctrl-C says what
happens. The server is ``tests/support/fake_vllm.py`` (see ``test_service_step.py``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, base_env, local_harness, marked, wait_for
from tests.integration.test_service_step import CLIENT, SERVER, free_port
from tests.support.sshd import SshServer


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
model = "tiny-llama"

[steps.serve]
command = {serve}, "--startup", "0.5", "--model", "{{model}}"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.serve_late]
command = {serve}, "--bind-after", "4", "--startup", "0"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.serve_ssh]
command = {serve}, "--not-http"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 3 }}

[steps.serve_idle]
command = {serve}, "--startup", "2"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 31 }}

[steps.generate]
command = {client}
needs = ["serve"]

[steps.generate_late]
command = {client}
needs = ["serve_late"]

[steps.generate_ssh]
command = {client}
needs = ["serve_ssh"]

[steps.generate_idle]
command = {client}
needs = ["serve_idle"]
"""


def ssh_harness(sshd: SshServer, tmp_path: Path) -> Harness:
    workdir = tmp_path / "work"
    workdir.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=sys.executable, workdir=str(workdir)))
    (tmp_path / "pipeline.toml").write_text(pipeline(free_port()))
    env = base_env(tmp_path) | {
        "HARNESS_HOSTS": str(hosts),
        "HARNESS_RUN_GPU_DEVICES": str(workdir / "no-gpu*"),
    }
    return Harness(tmp_path, env, "box", workdir)


@pytest.fixture(params=["local", pytest.param("ssh", marks=pytest.mark.ssh)])
def box(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "local":
        h = local_harness(tmp_path, pipeline(free_port()))
    else:
        h = ssh_harness(request.getfixturevalue("sshd"), tmp_path)
    yield h
    for run in (h.workdir / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, signal.SIGKILL)


def rows(h: Harness, step: str) -> list[dict]:
    r = h("runs", "-t", h.target, "--json")
    assert r.code == 0, r.err
    return [x for x in json.loads(r.out) if x["record"]["step"] == step]


def port_of(h: Harness) -> int:
    return int(re.search(r"port = (\d+)", (h.cwd / "pipeline.toml").read_text()).group(1))  # type: ignore[union-attr]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- item 1: ports and ownership ----------------------------------------------------------


def test_a_kept_server_of_other_settings_on_the_port_is_named_and_nothing_is_started(
    box: Harness,
) -> None:
    """Measured: the old server's /health declared the new one ready; the step talked to the
    old model and ended `succeeded`."""
    first = box("run", "generate", "-t", box.target, "--keep-service")
    assert first.code == 0, first.out + first.err
    (old,) = rows(box, "serve")
    port = port_of(box)
    second = box("run", "generate", "-t", box.target, "--set", "model=other-model")
    assert second.code != 0
    said = flat(second.err)
    assert f"port {port} is already in use by run {old['record']['id']} (step serve:" in said
    assert "--model tiny-llama" in said  # its settings: the command it runs
    assert "the service was not started" in said
    new = [r for r in rows(box, "serve") if r["record"]["id"] != old["record"]["id"]]
    assert len(new) == 1 and new[0]["state"] == "failed"
    assert not (box.run_dir(new[0]["record"]["id"]) / "ready.json").exists()
    assert rows(box, "generate")[-1]["record"]["id"] == rows(box, "generate")[0]["record"]["id"]
    assert len(list((box.workdir / "hs").glob("hs_*.safetensors"))) == 6  # nothing written
    assert [r["label"] for r in rows(box, "serve") if r["record"]["id"] == old["record"]["id"]] \
        == [f"service :{port} ready"]  # fmt: skip


def test_ready_only_when_the_services_own_tree_holds_the_port(box: Harness) -> None:
    """A server that binds only after loading, while another process answers /health on its
    port: never ready on the other's word."""
    port = port_of(box)
    proc = box.popen("run", "generate_late", "-t", box.target, stdout=subprocess.DEVNULL)
    runs = box.workdir / ".harness" / "runs"
    wait_for(lambda: any((d / "supervisor.json").exists() for d in runs.glob("serve_late-*")),
             timeout=30)  # fmt: skip
    foreign = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", str(port), "--out", str(box.workdir / "other"),
         "--startup", "0"], stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert proc.wait(timeout=60) != 0
        assert proc.stderr is not None
        err = flat(proc.stderr.read().decode())
        assert f"port {port} answers, but it is held by pid {foreign.pid}" in err, err
        assert "not by this service" in err
        assert not rows(box, "generate_late")  # never launched
        assert not (box.workdir / "other").exists() or not list((box.workdir / "other").iterdir())
    finally:
        foreign.kill()
        foreign.wait()


def test_a_port_that_answers_but_not_http_is_named_and_the_supervisor_lives(
    box: Harness,
) -> None:
    """Measured: BadStatusLine crashed the service's supervisor; the run read `lost`."""
    r = box("run", "generate_ssh", "-t", box.target)
    assert r.code != 0
    port = port_of(box)
    (row,) = rows(box, "serve_ssh")
    assert row["state"] == "failed", row
    assert f"port {port} answers, but not HTTP: SSH-2.0-OpenSSH_9.2p1" in row["label"], row
    assert f"port {port} answers, but not HTTP: SSH-2.0-OpenSSH_9.2p1" in flat(r.out + r.err)
    assert "BadStatusLine" not in r.out + r.err
    assert (box.run_dir(row["record"]["id"]) / "supervisor.err").read_text() == ""


# -- item 2: shared services, counted -----------------------------------------------------


def test_a_shared_service_stays_for_its_last_user_and_stop_names_the_users(
    box: Harness,
) -> None:
    """Measured: a short run that reused a live service stopped it when it ended; the long
    run died mid-work with no word why; `stop serve` said nothing of its user."""
    t = box.target
    long = box("run", "generate", "-t", t, "--detach", "--set", "n=3000", "--set", "delay=0.05")
    assert long.code == 0, long.out + long.err
    (gen,) = rows(box, "generate")
    gid, sid = gen["record"]["id"], rows(box, "serve")[0]["record"]["id"]
    wait_for(lambda: b"sample 3:" in (box.run_dir(gid) / "log").read_bytes(), timeout=30)
    short = box("run", "generate", "-t", t, "--set", "n=2")
    assert short.code == 0, short.out + short.err
    assert f"reusing {sid}" in short.err
    sid_row = next(r for r in rows(box, "serve") if r["record"]["id"] == sid)
    assert sid_row["state"] == "running" and marked(sid), sid_row  # still up for the long run
    assert [r["state"] for r in rows(box, "generate") if r["record"]["id"] == gid] == ["running"]
    short_id = next(r for r in rows(box, "generate") if r["record"]["id"] != gid)["record"]["id"]
    assert "still use(s) it" in (box.run_dir(short_id) / "log").read_text()
    table = box("runs", "-t", t)
    assert re.search(rf"{sid}\s+serve\s+service :\d+ ready · used by {gid}", flat(table.out)), \
        table.out  # fmt: skip

    refused = box("stop", sid, "-t", t)
    assert refused.code != 0
    assert f"{sid} is a service that {gid} still use(s)" in flat(refused.err), refused.err
    assert "--force" in refused.err and marked(sid)
    forced = box("stop", sid, "-t", t, "--force")
    assert forced.code == 0, forced.out + forced.err
    box.status(gid, timeout=30)
    (gen,) = [r for r in rows(box, "generate") if r["record"]["id"] == gid]
    assert gen["state"] == "failed"
    log = (box.run_dir(gid) / "log").read_text()
    assert f"harness: service {sid}: the service was stopped (harness stop) while this step " \
        "used it" in log  # fmt: skip
    shown = box("logs", gid, "-t", t)
    assert "stopped under it by harness stop" in flat(shown.out + shown.err)


def test_a_service_whose_step_never_launched_stops_itself_after_its_grace(
    box: Harness,
) -> None:
    """Measured: a controller killed (-9) while the service started left it up for good."""
    toml = box.cwd / "pipeline.toml"
    toml.write_text(toml.read_text().replace("ready_timeout = 31", "ready_timeout = 31, "
                                             "unclaimed_minutes = 0.05"))  # fmt: skip
    proc = subprocess.Popen(box.argv("run", "generate_idle", "-t", box.target), cwd=box.cwd,
                            env=box.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    runs = box.workdir / ".harness" / "runs"
    wait_for(lambda: any((d / "supervisor.json").exists() for d in runs.glob("serve_idle-*")),
             timeout=30)  # fmt: skip
    os.killpg(proc.pid, signal.SIGKILL)  # the controller (and its ssh) gone, mid-start
    proc.wait()
    sid = next(runs.glob("serve_idle-*")).name
    wait_for(lambda: (runs / sid / "ready.json").exists(), timeout=30)
    assert marked(sid)
    wait_for(lambda: not marked(sid), timeout=30, what="the unclaimed service to stop")
    (row,) = rows(box, "serve_idle")
    assert row["label"].startswith(f"service :{port_of(box)} stopped"), row
    assert "no run used this service within 0.05 min" in (runs / sid / "log").read_text()
    assert not rows(box, "generate_idle")


def test_ctrl_c_while_the_service_starts_says_it_is_stopped_and_it_is(box: Harness) -> None:
    """Measured: the words said it "keeps running ... will be reused", and it was stopped."""
    proc = box.popen("run", "generate_idle", "-t", box.target, stdout=subprocess.DEVNULL)
    runs = box.workdir / ".harness" / "runs"
    wait_for(lambda: any(b"loading" in p.read_bytes() or b"Started" in p.read_bytes()
                         for p in runs.glob("serve_idle-*/log")), timeout=30)  # fmt: skip
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) != 0
    assert proc.stderr is not None
    err = flat(proc.stderr.read().decode())
    sid = next(runs.glob("serve_idle-*")).name
    assert f"generate_idle was not launched (Ctrl-C): the service {sid}, started for it, is " \
        "stopped now" in err, err  # fmt: skip
    assert "will be reused" not in err and "keeps running" not in err
    wait_for(lambda: not marked(sid), timeout=30)
    assert rows(box, "serve_idle")[0]["label"].startswith(f"service :{port_of(box)} stopped")


def test_ctrl_c_with_keep_service_says_it_keeps_starting_and_the_next_run_reuses_it(
    box: Harness,
) -> None:
    proc = box.popen("run", "generate_idle", "-t", box.target, "--keep-service",
                     stdout=subprocess.DEVNULL)  # fmt: skip
    runs = box.workdir / ".harness" / "runs"
    wait_for(lambda: any(b"Started" in p.read_bytes() for p in runs.glob("serve_idle-*/log")),
             timeout=30)  # fmt: skip
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) != 0
    assert proc.stderr is not None
    err = flat(proc.stderr.read().decode())
    sid = next(runs.glob("serve_idle-*")).name
    assert f"the service {sid} keeps starting (--keep-service); it stops by itself if no run " \
        "uses it within 10 min of being ready" in err, err  # fmt: skip
    assert marked(sid)
    again = box("run", "generate_idle", "-t", box.target)
    assert again.code == 0, again.out + again.err
    assert f"reusing {sid}" in again.err
    box.status(sid, timeout=30)
    assert not marked(sid)
