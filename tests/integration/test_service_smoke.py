"""``harness run generate --smoke`` for the served pipeline (issue 42, item 5): the server it
needs starts as a smoke service of its own -- the same command with the step's smoke ``args``
(``--load-format dummy --hf-overrides '{"num_hidden_layers": 4}'``) and the captured layer ids
mapped onto the cut model -- K samples go through the same client, the structural check reads
them, and the smoke service stops. A real run never reuses a smoke service, nor the reverse;
a planted NaN fails the check; ``report --require-smoke`` counts the green smoke run.

The server is ``tests/support/fake_vllm.py`` (it refuses a layer id above its layer count, as
vLLM does); the step's interpreter is the tests' CPU torch venv, which the check needs.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, base_env, local_harness, marked, wait_for
from tests.integration.test_service_step import CLIENT, SERVER, cleanup, free_port, one, runs_of
from tests.support.pipvenvs import PipVenv, verify_cpu_venv
from tests.support.sshd import SshServer


def pipeline(port: int, python: Path) -> str:
    serve = (
        f'["{{python}}", "{SERVER}", "--port", "{{port}}", "--out", "{{out}}", "--model", '
        f'"{{model}}", "--layer-ids", "{{layer_ids}}", "--values", "ramp", "--startup", "0.3"'
    )
    smoke = """layers = 4
layer_ids = "layer_ids"
params = { out = "{smoke_dir}/staging" }
args = ["--load-format", "dummy", "--hf-overrides", '{{"num_hidden_layers": {smoke_layers}}}']
"""
    check = (
        '["{python}", "{verifiers}/hidden_states.py", "--structure", "--data", "{hs}", '
        '"--model", "{model}", "--layer-ids", "{layer_ids}", "--max-samples", "{n}"]'
    )
    generate = f"""python = "{python}"
command = ["{{python}}", "{CLIENT}", "--port", "{{port}}", "--n", "{{n}}", "--delay", "{{delay}}",
           "--output", "{{hs}}"]
smoke = {{ samples = "n", layer_ids = "layer_ids", params = {{ hs = "{{smoke_dir}}/hidden" }} }}
verify = {{ command = {check}, smoke = {check}, timeout = 120 }}
"""
    return f"""
[params]
port = {port}
out = "{{workdir}}/staging"
hs = "{{workdir}}/hidden"
model = "{{workdir}}/model"
layer_ids = "2, 16, 29, 32"
serve_python = "{sys.executable}"
n = 6
delay = 0.02

[steps.serve]
python = "{{serve_python}}"
command = {serve}]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.serve.smoke]
{smoke}
[steps.serve_nan]
command = {serve}, "--nan-at", "1"]
service = {{ port = "{{port}}", health = "/health", ready_timeout = 30 }}

[steps.serve_nan.smoke]
{smoke}
[steps.generate]
needs = ["serve"]
{generate}
[steps.generate_nan]
needs = ["serve_nan"]
{generate}"""


@pytest.fixture(scope="module")
def venv() -> PipVenv:
    return verify_cpu_venv()


def model_folder(workdir: Path) -> None:
    (workdir / "model").mkdir(parents=True, exist_ok=True)
    (workdir / "model" / "config.json").write_text(
        json.dumps({"hidden_size": 8, "num_hidden_layers": 32})
    )


@pytest.fixture
def local(tmp_path: Path, venv: PipVenv) -> Iterator[Harness]:
    h = local_harness(tmp_path, pipeline(free_port(), venv.python))
    model_folder(h.workdir)
    yield h
    cleanup(h)


def service_log(h: Harness, sid: str) -> str:
    return (h.run_dir(sid) / "log").read_text()


def test_smoke_generate_serves_a_cut_model_with_mapped_ids_checks_and_stops_it(
    local: Harness, venv: PipVenv
) -> None:
    before = local("report", "generate", "-t", "local", "--require-smoke")
    assert "step generate has not been smoke-tested here" in " ".join(before.out.split())

    r = local("run", "generate", "-t", "local", "--smoke", "--smoke-samples", "3", timeout=180)
    assert r.code == 0, r.out + r.err
    serve, gen = one(local, "serve"), one(local, "generate")
    sid, gid = serve["record"]["id"], gen["record"]["id"]
    # the server: the same command with vLLM's own flags for a cut, random-weight model, and
    # the ids mapped so that the final layer (32 of 32) is the final one of 4
    log = service_log(local, sid)
    assert "model " in log and ": 4 layers, load_format=dummy, " in log, log
    assert 'hf_overrides={"num_hidden_layers": 4}' in log
    assert "aux hidden state layer ids [1, 2, 3, 4]" in log
    assert serve["record"]["smoke"]["layers"] == 4  # a smoke run of its own
    assert gen["record"]["services"] == [{"step": "serve", "run_id": sid, "keep": False}]
    # K samples through the same client into the smoke run's own folder, checked structurally
    out = local.run_dir(gid) / "smoke" / "hidden"
    assert sorted(p.name for p in out.glob("hs_*")) == [f"hs_{i}.safetensors" for i in range(3)]
    assert not (local.workdir / "hidden").exists()  # nothing where a real run writes
    assert gen["label"].startswith("succeeded · verified: values 3/3"), gen["label"]
    assert "layers 3/3" in gen["label"] and "lengths 3/3" in gen["label"]
    local.status(sid)
    assert marked(sid) == []  # the smoke service stopped with the run
    assert one(local, "serve")["label"].endswith("stopped")

    after = local("report", "generate", "-t", "local", "--require-smoke")
    assert "smoke-tested" not in " ".join(after.out.split()), after.out
    # the server's own environment is vouched for too: another interpreter for it (torch)
    moved = local("report", "generate", "-t", "local", "--require-smoke", "--set",
                  f"serve_python={venv.python}")  # fmt: skip
    said = " ".join(moved.out.split())
    assert "step generate not smoke-tested since service serve: torch absent -> 2." in said, said
    assert f"(last green smoke run {gid})" in said


def test_a_real_run_never_reuses_a_smoke_service_nor_a_smoke_run_a_real_one(
    local: Harness,
) -> None:
    kept = local("run", "generate", "-t", "local", "--keep-service", "--set", "n=2")
    assert kept.code == 0, kept.out + kept.err
    real = one(local, "serve")["record"]["id"]
    port = free_port()
    smoke = local("run", "generate", "-t", "local", "--smoke", "--set", f"port={port}",
                  timeout=180)  # fmt: skip
    assert smoke.code == 0, smoke.out + smoke.err
    assert "reusing" not in smoke.err
    serves = [v for k, v in runs_of(local).items() if k.startswith("serve:")]
    (cut,) = [s for s in serves if s["record"]["smoke"]]
    assert cut["record"]["id"] != real and marked(cut["record"]["id"]) == []
    assert marked(real)  # the kept real service is untouched

    # a smoke run still serving: a real run on its port does not take it for its own
    local("stop", real, "-t", "local")
    wait_for(lambda: marked(real) == [])
    slow = local("run", "generate", "-t", "local", "--smoke", "--detach", "--set", "delay=2",
                 "--set", "n=90", timeout=180)  # fmt: skip
    assert slow.code == 0, slow.out + slow.err
    live = [
        v["record"]["id"]
        for v in runs_of(local).values()
        if v["record"]["step"] == "serve" and v["record"]["smoke"] and marked(v["record"]["id"])
    ]
    assert len(live) == 1, runs_of(local)
    again = local("run", "generate", "-t", "local", "--set", "n=1")
    assert again.code != 0
    assert f"reusing {live[0]}" not in again.err
    assert re.search(rf"port \d+ is already in use by run {live[0]}", again.err), again.err
    gen = [v for v in runs_of(local).values() if v["record"]["step"] == "generate"]
    assert [g["state"] for g in gen if g["record"]["smoke"]].count("running") == 1
    assert local("stop", "generate", "-t", "local").code == 0  # the smoke run, its service too
    wait_for(lambda: marked(live[0]) == [], timeout=30)


def test_the_smoke_check_fails_on_a_planted_bad_file(local: Harness) -> None:
    r = local("run", "generate_nan", "-t", "local", "--smoke", timeout=180)
    assert r.code == 1, r.out + r.err
    label = one(local, "generate_nan")["label"]
    assert label.startswith("failed verification: 1 sample wrong (hs_1 non-finite: NaN/inf at "
                            "row 0 (layer 1)); values 3/4"), label  # fmt: skip


def test_keep_service_is_refused_with_smoke(local: Harness) -> None:
    r = local("run", "generate", "-t", "local", "--smoke", "--keep-service")
    assert r.code != 0 and "Traceback" not in r.err
    assert "--keep-service with --smoke" in r.err
    assert not runs_of(local)


@pytest.mark.ssh
def test_smoke_generate_over_ssh_stops_its_smoke_service(
    sshd: SshServer, tmp_path: Path, venv: PipVenv
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    model_folder(workdir)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=sys.executable, workdir=str(workdir)))
    (tmp_path / "pipeline.toml").write_text(pipeline(free_port(), venv.python))
    box = Harness(tmp_path, base_env(tmp_path) | {"HARNESS_HOSTS": str(hosts)}, "box", workdir)
    try:
        r = box("run", "generate", "-t", "box", "--smoke", timeout=180)
        assert r.code == 0, r.out + r.err
        sid = one(box, "serve")["record"]["id"]
        assert "aux hidden state layer ids [1, 2, 3, 4]" in service_log(box, sid)
        assert one(box, "generate")["label"].startswith("succeeded · verified: values 4/4")
        wait_for(lambda: marked(sid) == [])
    finally:
        cleanup(box)
