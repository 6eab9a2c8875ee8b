"""The ``exec`` target kind through real wrapper programs on this machine; no mocks.

The "container" is what ``docker exec`` reaches: a long-lived PID and mount namespace with a
reaping init (``unshare --fork --pid --mount-proc``), entered by ``nsenter`` for every
command -- via ``local`` and via the tests' real sshd. Through it: probe, check,
apply-patches, run, logs and stop, each a fresh ``harness`` process; that the step really ran
in the namespace is read from ``/proc``, and stop must end the whole tree there. Other real
wrappers (``env -i``, ``setpriv``, a one-shot ``unshare``) show that any prefix works.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import FIXTURES, PATCHED, SERIES_FILES, make_tiny
from tests.integration.test_runs_ssh import TREE, Harness, base_env, gone, marked, toml_str
from tests.support.sshd import SshServer

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"
#: PID 1 of the namespace: reaps every orphan, as docker's --init (tini) does.
INIT = """
import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.05)
"""
WHERE = "import os; print('ns', os.readlink('/proc/self/ns/pid'), 'pid', os.getpid(), flush=True)"
PIPELINE = f"""
[steps.where]
command = ["{{python}}", "-c", {toml_str(WHERE)}]

[steps.tree]
command = ["{{python}}", "-c", {toml_str(TREE)}, "{{run_dir}}/pids"]
"""


@pytest.fixture
def container() -> Iterator[int]:
    """The namespace's init, as a pid of this machine (``nsenter -t PID``)."""
    proc = subprocess.Popen(
        ["unshare", "--fork", "--pid", "--mount-proc", sys.executable, "-c", INIT],
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    while not children.read_text().split():
        assert proc.poll() is None, "unshare failed (it needs root or user namespaces)"
        assert time.monotonic() < deadline, "unshare started no init"
        time.sleep(0.01)
    init = int(children.read_text().split()[0])
    yield init
    os.kill(init, signal.SIGKILL)  # ends every process of the namespace with it
    proc.wait(timeout=10)


def ns_of(pid: int | str) -> str:
    return os.readlink(f"/proc/{pid}/ns/pid")


def entry(name: str, via: str, prefix: list[str], python: str, workdir: Path | None) -> str:
    lines = [f"[hosts.{name}]", 'kind = "exec"', f"via = {json.dumps(via)}",
             f"exec = {json.dumps(prefix)}", f"python = {json.dumps(python)}"]  # fmt: skip
    if workdir is not None:
        lines.append(f"workdir = {json.dumps(str(workdir))}")
    return "\n".join(lines) + "\n"


def wrapped(tmp_path: Path, hosts: str) -> Harness:
    """A user with ``hosts`` as hosts.toml, PIPELINE, and the tiny venv's series."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    (tmp_path / "pipeline.toml").write_text(PIPELINE)
    (tmp_path / "hosts.toml").write_text(hosts)
    patches = tmp_path / "patches"
    if not patches.exists():
        shutil.copytree(FIXTURES / "good", patches)
    env = base_env(tmp_path) | {
        "HARNESS_HOSTS": str(tmp_path / "hosts.toml"),
        "HARNESS_PATCHES": str(patches),
        "HARNESS_RUN_GPU_DEVICES": str(workdir / "no-gpu*"),
    }
    return Harness(tmp_path, env, "box", workdir)


def through_the_wrapper(h: Harness, site: Path, container: int) -> None:
    """probe, check, apply-patches, run (followed), run detached, logs, stop -- all ``-t box``."""
    r = h("probe", "tinypkg.alpha", "-t", "box")
    assert r.code == 0, r.err
    assert str(site / "tinypkg" / "alpha.py") in r.out and "box (nsenter via " in r.out

    r = h("check", "callerpkg", "-t", "box", "--json")  # the fixture site, found through .pth
    assert r.code == 1, r.err
    found = {(f["category"], f["line"]) for f in json.loads(r.out)["findings"]}
    assert ("import-missing", 18) in found, sorted(found)

    r = h("apply-patches", "-t", "box", "--patches", h.env["HARNESS_PATCHES"])
    assert r.code == 0, r.err
    assert "applied: 3 file(s) written" in r.out
    for rel in SERIES_FILES:
        assert (site / rel).read_bytes() == (PATCHED / rel).read_bytes()

    r = h("run", "where", "-t", "box")  # followed to its end, through the wrapper's stream
    assert r.code == 0, r.err
    (line,) = [x for x in r.out.splitlines() if x.startswith("ns ")]
    assert line.split()[1] == ns_of(container) != ns_of("self")  # it ran in the container
    assert int(line.split()[3]) < 1000  # a pid of the namespace, not of this machine

    run_id = h.launch("tree")
    pids = h.run_dir(run_id) / "pids"
    deadline = time.monotonic() + 30
    while not pids.exists():
        assert time.monotonic() < deadline, "the tree never started"
        time.sleep(0.05)
    inside = marked(run_id)  # this machine sees the namespace's processes too
    assert len(inside) == 3 and {ns_of(p) for p in inside} == {ns_of(container)}
    r = h("logs", run_id, "-t", "box")
    assert r.code == 0 and "tree ready" in r.out, r.err
    assert h.state_of(run_id) == "running"
    r = h("stop", run_id, "-t", "box", "--grace", "0.5")
    assert r.code == 0, r.err + r.out
    assert "SIGTERM to 3 process(es)" in r.out and "SIGKILL after the grace period to 1" in r.out
    assert all(gone(p) for p in inside) and marked(run_id) == []
    assert h.state_of(run_id) == "killed (SIGTERM)"


@pytest.fixture
def tiny_site(tmp_path: Path) -> Callable[[], tuple[str, Path]]:
    def make() -> tuple[str, Path]:
        tiny = make_tiny(tmp_path / "venv")
        (tiny.site / "fixture-site.pth").write_text(str(SITE) + "\n")
        return str(tiny.python), tiny.site

    return make


@pytest.mark.slow  # eight harness commands, ~30 s
def test_probe_check_patch_run_logs_stop_in_a_container_on_this_machine(
    tmp_path: Path, container: int, tiny_site: Callable[[], tuple[str, Path]]
) -> None:
    python, site = tiny_site()
    prefix = ["nsenter", "-t", str(container), "-p", "-m", "--"]
    h = wrapped(tmp_path, entry("box", "local", prefix, python, tmp_path / "work"))
    try:
        through_the_wrapper(h, site, container)
    finally:
        for run in (h.workdir / ".harness" / "runs").glob("*"):
            for pid in marked(run.name):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.ssh
def test_the_same_through_a_container_behind_an_ssh_host(
    tmp_path: Path, sshd: SshServer, container: int, tiny_site: Callable[[], tuple[str, Path]]
) -> None:
    python, site = tiny_site()
    prefix = ["nsenter", "-t", str(container), "-p", "-m", "--"]
    hosts = sshd.host_entry("gpu") + "\n" + entry("box", "gpu", prefix, python, tmp_path / "work")
    h = wrapped(tmp_path, hosts)
    r = h("hosts", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["hosts"]["box"]["via"] == "gpu"
    try:
        through_the_wrapper(h, site, container)
    finally:
        for run in (h.workdir / ".harness" / "runs").glob("*"):
            for pid in marked(run.name):
                os.kill(pid, signal.SIGKILL)


SHOW = "import os; print('uid', os.getuid(), 'mark', 'EXEC_MARK' in os.environ, flush=True)"


@pytest.mark.parametrize(
    ("prefix", "uid", "mark"),
    [
        (["env"], 0, True),  # the wrapper passes this machine's environment on
        (["env", "-i", "PATH=/usr/bin:/bin"], 0, False),
        (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"], 65534, True),
    ],
    ids=["env", "env-i", "setpriv"],
)
def test_any_prefix_wraps_a_run(tmp_path: Path, prefix: list[str], uid: int, mark: bool) -> None:
    """A world-readable workdir and the system Python: ``nobody`` must reach both."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    assert python is not None
    workdir = Path(
        subprocess.check_output(["mktemp", "-d", "/tmp/h-exec.XXXXXX"], text=True).strip()
    )
    try:
        workdir.chmod(0o777)
        h = wrapped(tmp_path, entry("box", "local", prefix, python, workdir))
        (tmp_path / "pipeline.toml").write_text(
            f'[steps.show]\ncommand = ["{{python}}", "-c", {toml_str(SHOW)}]\n'
        )
        r = h("run", "show", "-t", "box", EXEC_MARK="1")
        assert r.code == 0, r.err
        assert f"uid {uid} mark {mark}" in r.out, r.out
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_one_shot_wrapper_serves_probes(tmp_path: Path) -> None:
    """``unshare --fork --pid`` makes a new namespace per command: fine for probes and checks
    (a run would end with the launch's namespace -- hence nsenter/docker exec for runs)."""
    prefix = ["unshare", "--fork", "--pid", "--mount-proc"]
    h = wrapped(tmp_path, entry("box", "local", prefix, sys.executable, None))
    r = h("probe", "json:dumps", "-t", "box", "--json")
    assert r.code == 0, r.err
    got = json.loads(r.out)
    assert got["target"] == "box (unshare via local)"
    assert [s["qualname"] for s in got["symbols"]] == ["dumps"]
