"""Connection sharing (``harness.targets.mux``) against a real sshd, with real processes.

No timing assertions: the tests check what can be observed -- the socket appears, the
second ``harness`` process imports no Paramiko and says (``HARNESS_MUX_DEBUG``) that it went
through the mux, its output equals the direct path's, servers exit when they should and
leave nothing behind.

Every test gets a short private ``XDG_RUNTIME_DIR`` (the socket path must stay under the
kernel's 107-byte limit) and stops every server it started at teardown.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConnectError, TargetError
from harness.targets import mux
from harness.targets.registry import load_hosts
from harness.targets.ssh import SshTarget
from harness.targets.ssh.entry import HostConfig
from tests.support.cli import CliResult, run_cli
from tests.support.sshd import SshServer
from tests.support.wheels import SeedVenv

pytestmark = pytest.mark.ssh

REF = "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups"
HEAVY = ("paramiko", "fabric", "invoke", "cryptography")


# -- fixtures and helpers ------------------------------------------------------------------


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short ``XDG_RUNTIME_DIR``; at teardown every server in it is stopped and checked gone."""
    root = Path(tempfile.mkdtemp(prefix="hmx-", dir="/tmp"))  # 0700, short
    try:
        yield root
    finally:
        folder = root / "harness-mux"
        pids = [p for p in (_pid_of(s) for s in _sockets(root)) if p]
        mux.stop_all(folder)
        pids += _server_pids(root)
        for pid in pids:  # anything still there is a bug, but must not outlive the test
            if _wait(lambda pid=pid: not _running(pid), 5.0) is False:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"mux server {pid} was still running after stop_all")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def env(cli_env: dict[str, str], runtime: Path) -> dict[str, str]:
    return {
        **cli_env,
        "XDG_RUNTIME_DIR": str(runtime),
        "HARNESS_MUX_DEBUG": "1",
        "HARNESS_SSH_PERSIST": "600",
    }


@pytest.fixture
def box(sshd: SshServer, seed_venv: SeedVenv, tmp_path: Path) -> Path:
    return _write_hosts(tmp_path, sshd.host_entry("box", python=str(seed_venv.python)))


def _write_hosts(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text('default = "box"\n' + body)
    return path


def _cli(hosts: Path, env: dict[str, str], *args: str, **extra: str) -> CliResult:
    return run_cli(*args, env={**env, "HARNESS_HOSTS": str(hosts), **extra}, timeout=120)


def _sockets(runtime: Path) -> list[Path]:
    return sorted((runtime / "harness-mux").glob("*.sock"))


def _pid_of(sock: Path, wait: float = 2.0) -> int | None:
    hello = mux.ping(str(sock), wait=wait)
    return None if hello is None else int(hello["pid"])


def _wait(pred: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Poll ``pred`` until it returns something truthy; that value, or False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value or time.monotonic() > deadline:
            return value or False
        time.sleep(0.05)


def _ready_server(runtime: Path) -> int:
    """Wait for exactly one server in ``runtime`` to answer; its pid."""

    def one() -> int | None:
        socks = _sockets(runtime)
        return _pid_of(socks[0], wait=15.0) if len(socks) == 1 else None

    pid = _wait(one)
    assert pid, f"no mux server answered in {runtime}: {_logs(runtime)}"
    return int(pid)


def _logs(runtime: Path) -> str:
    return "\n".join(p.read_text() for p in (runtime / "harness-mux").glob("*.log"))


def _running(pid: int) -> bool:
    """Alive and not a zombie (an exited child of this pytest process waits to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _server_pids(runtime: Path) -> list[int]:
    """Running mux server processes whose argv names a socket in ``runtime``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        mine = "harness.targets.mux" in cmdline and str(runtime) in cmdline
        if mine and _running(int(entry.name)):
            found.append(int(entry.name))
    return found


def _imported_heavy(stderr: str) -> list[str]:
    """Modules from ``-X importtime`` output (PYTHONPROFILEIMPORTTIME) that are SSH stack."""
    names = [line.split("|")[-1].strip() for line in stderr.splitlines() if "|" in line]
    return [n for n in names if n.split(".")[0] in HEAVY]


def _without_debug(stderr: str) -> str:
    return "\n".join(x for x in stderr.splitlines() if not x.startswith("harness-mux:"))


# -- the CLI through the mux ---------------------------------------------------------------


def test_second_command_goes_through_the_mux(box: Path, env: dict[str, str], runtime: Path) -> None:
    first = _cli(box, env, "probe", REF, "--json")
    assert first.code == 0, first.err
    assert "connecting directly" in first.err and "started mux server" in first.err
    pid = _ready_server(runtime)
    sock = _sockets(runtime)[0]
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE((runtime / "harness-mux").stat().st_mode) == 0o700

    second = _cli(box, env, "probe", REF, "--json", PYTHONPROFILEIMPORTTIME="1")
    assert second.code == 0, second.err
    assert f"via mux {sock} (pid {pid})" in second.err
    assert _imported_heavy(second.err) == []
    assert "harness.targets.mux" in second.err  # the import check saw our own modules
    assert second.out == first.out  # same JSON as the direct path

    direct = _cli(box, env, "probe", REF, HARNESS_SSH_PERSIST="0")
    text = _cli(box, env, "probe", REF)
    assert direct.code == text.code == 0
    assert text.out == direct.out  # the Rich view, label included, is the same too
    assert "via mux" in text.err and "via mux" not in direct.err
    assert _server_pids(runtime) == [pid]  # still one server


def test_persist_zero_disables_sharing(box: Path, env: dict[str, str], runtime: Path) -> None:
    for _ in range(2):
        r = _cli(box, env, "probe", REF, HARNESS_SSH_PERSIST="0")
        assert r.code == 0, r.err
        assert "mux" not in r.err
    assert _sockets(runtime) == []
    assert _server_pids(runtime) == []


def test_bad_persist_value_is_a_config_error(box: Path, env: dict[str, str]) -> None:
    r = _cli(box, env, "probe", REF, HARNESS_SSH_PERSIST="ten minutes")
    assert r.code == 2
    assert "HARNESS_SSH_PERSIST" in r.err and "Traceback" not in r.err


def test_stale_socket_is_replaced(box: Path, env: dict[str, str], runtime: Path) -> None:
    assert _cli(box, env, "probe", REF).code == 0
    old = _ready_server(runtime)
    sock = _sockets(runtime)[0]
    os.kill(old, signal.SIGKILL)  # dies without removing its socket
    assert _wait(lambda: not _running(old))
    assert sock.exists()

    r = _cli(box, env, "probe", REF)
    assert r.code == 0, r.err
    assert "stale" in r.err and "connecting directly" in r.err
    new = _ready_server(runtime)
    assert new != old and _sockets(runtime) == [sock]
    assert "via mux" in _cli(box, env, "probe", REF).err


def test_stale_file_from_nowhere(
    box: Path, env: dict[str, str], runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket file nobody ever listened on (e.g. left by a crash before a reboot)."""
    monkeypatch.setenv("HOME", env["HOME"])  # the name depends on HOME: compute it as the CLI
    host = load_hosts(box).hosts["box"]
    path = mux.socket_path(host, None, {"XDG_RUNTIME_DIR": str(runtime)})
    assert path is not None
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(path)  # bound, never listening, then closed: the file stays
    r = _cli(box, env, "probe", REF)
    assert r.code == 0, r.err
    assert "stale" in r.err
    _ready_server(runtime)
    assert _sockets(runtime) == [Path(path)]


def test_killed_ssh_session_falls_back_and_respawns(
    box: Path, env: dict[str, str], runtime: Path, sshd: SshServer
) -> None:
    assert _cli(box, env, "probe", REF).code == 0
    old = _ready_server(runtime)
    assert "via mux" in _cli(box, env, "probe", REF).err
    assert sshd.kill_sessions() >= 1  # the server's SSH connection drops

    r = _cli(box, env, "probe", REF)
    assert r.code == 0, r.err
    assert "via mux" not in r.err  # the dead server was not used
    assert _wait(lambda: not _running(old)), "the server outlived its SSH connection"
    new = _ready_server(runtime)
    assert new != old
    assert "the SSH connection dropped" in _logs(runtime) or "connection lost" in _logs(runtime)
    assert "via mux" in _cli(box, env, "probe", REF).err


def test_idle_timeout_ends_the_server(box: Path, env: dict[str, str], runtime: Path) -> None:
    assert _cli(box, env, "probe", REF, HARNESS_SSH_PERSIST="2").code == 0
    pid = _ready_server(runtime)
    assert _wait(lambda: not _sockets(runtime) and not _running(pid), 15.0)
    assert "idle for 2s" in _logs(runtime)


@pytest.mark.parametrize("problem", ["world-writable", "other-owner"])
def test_unsafe_socket_folder_is_not_used(
    box: Path, env: dict[str, str], runtime: Path, problem: str
) -> None:
    folder = runtime / "harness-mux"
    folder.mkdir()
    if problem == "world-writable":
        folder.chmod(0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the folder to another user")
        folder.chmod(0o700)  # private, but not ours
        os.chown(folder, 65534, 65534)
    for _ in range(2):
        r = _cli(box, env, "probe", REF)
        assert r.code == 0, r.err
        assert "no private socket folder" in r.err
    assert list(folder.iterdir()) == []
    assert _server_pids(runtime) == []


def test_new_host_keys_are_accepted_only_in_the_foreground(
    sshd: SshServer, seed_venv: SeedVenv, tmp_path: Path, env: dict[str, str], runtime: Path
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    entry = sshd.host_entry("box", python=str(seed_venv.python), known_hosts=str(known))
    hosts = _write_hosts(tmp_path, entry)
    refused = _cli(hosts, env, "probe", REF)
    assert refused.code == 2 and "--accept-new-host-key" in refused.err
    assert "started mux server" not in refused.err  # no connection, nothing to keep
    assert _sockets(runtime) == [] and _server_pids(runtime) == []
    accepted = _cli(hosts, env, "probe", REF, "--accept-new-host-key")
    assert accepted.code == 0, accepted.err
    assert "started mux server" in accepted.err
    _ready_server(runtime)  # it verified the key that is now in known_hosts
    r = _cli(hosts, env, "probe", REF)
    assert r.code == 0 and "via mux" in r.err
    assert len(known.read_text().splitlines()) == 1


def test_errors_cross_the_socket_unchanged(
    sshd: SshServer, tmp_path: Path, env: dict[str, str], runtime: Path
) -> None:
    hosts = _write_hosts(tmp_path, sshd.host_entry("box", python="/opt/nowhere/bin/python"))
    direct = _cli(hosts, env, "probe", "vllm")
    assert direct.code == 2
    _ready_server(runtime)  # the connection worked, so a server was started
    shared = _cli(hosts, env, "probe", "vllm")
    assert shared.code == 2
    assert "via mux" in shared.err
    assert _without_debug(shared.err) == _without_debug(direct.err)
    assert "python interpreter '/opt/nowhere/bin/python' not found" in shared.err
    assert "Traceback" not in shared.err


def test_changed_hosts_entry_gets_its_own_server(
    box: Path,
    env: dict[str, str],
    runtime: Path,
    sshd: SshServer,
    seed_venv: SeedVenv,
    tmp_path: Path,
) -> None:
    assert _cli(box, env, "probe", REF).code == 0
    _ready_server(runtime)
    other_known = tmp_path / "kh2"
    shutil.copy(sshd.known_hosts, other_known)
    changed = tmp_path / "changed"
    changed.mkdir()
    hosts = _write_hosts(
        changed, sshd.host_entry("box", python=str(seed_venv.python), known_hosts=str(other_known))
    )
    r = _cli(hosts, env, "probe", REF)
    assert r.code == 0 and "connecting directly" in r.err
    assert _wait(lambda: len(_sockets(runtime)) == 2)


# -- SshTarget through the mux, in this process --------------------------------------------


def _host(server: SshServer) -> HostConfig:
    return HostConfig(
        name="box",
        address=server.host,
        port=server.port,
        user=server.user,
        identity=str(server.client_key),
        known_hosts=str(server.known_hosts),
    )


@pytest.fixture
def shared(
    sshd: SshServer, isolated_home: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SshTarget]:
    """An SshTarget that talks through a running mux server (started by a direct one)."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("HARNESS_SSH_PERSIST", "600")
    with SshTarget(_host(sshd)) as first:
        assert first.run(["true"]).ok
    _ready_server(runtime)
    t = SshTarget(_host(sshd))
    yield t
    t.close()


def test_results_and_errors_match_the_direct_path(
    shared: SshTarget, sshd: SshServer, tmp_path: Path
) -> None:
    direct = SshTarget(_host(sshd), persist=False)
    try:
        payload = bytes(range(256)) * 500
        code = "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d[::-1])"
        argv = ["python3", "-c", code]
        a, b = shared.run(argv, stdin=payload), direct.run(argv, stdin=payload)
        assert (a.argv, a.exit_code, a.stdout, a.stderr) == (
            b.argv,
            b.exit_code,
            b.stdout,
            b.stderr,
        )
        assert a.stdout == payload[::-1]
        assert shared._mux is not None and direct._mux is None  # really two paths
        assert shared._conn is None  # and no Paramiko connection on this side
        assert shared.label == direct.label

        env_code = "import os, sys; print(os.getcwd(), os.environ['X_V']); sys.exit(3)"
        r = shared.run(["python3", "-c", env_code], env={"X_V": "a $(b)"}, cwd=str(tmp_path))
        assert (r.exit_code, r.stdout) == (3, f"{tmp_path} a $(b)\n".encode())

        blob = tmp_path / "blob"
        blob.write_bytes(os.urandom(300_000))
        assert shared.read_bytes(str(blob)) == blob.read_bytes()
        assert shared.stat(str(blob)) == direct.stat(str(blob))
        assert shared.stat(str(tmp_path / "nope")) is None
        for t in (shared, direct):
            with pytest.raises(TargetError) as err:
                t.read_bytes(str(tmp_path / "nope"))
            assert type(err.value) is TargetError and "no such file" in err.value.message
        with pytest.raises(TargetError) as err:
            shared.run(["sleep", "30"], timeout=1)
        assert type(err.value) is TargetError and "timed out after 1s" in err.value.message
        assert shared.run(["echo", "still"]).stdout == b"still\n"
    finally:
        direct.close()


def test_concurrent_requests_share_one_server(shared: SshTarget, tmp_path: Path) -> None:
    files = []
    for i in range(6):
        f = tmp_path / f"f{i}"
        f.write_bytes(os.urandom(100_000 + i))
        files.append(f)
    failures: list[str] = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                r = shared.run(["python3", "-c", f"print({i} * 7)"])
                if r.stdout != f"{i * 7}\n".encode():
                    failures.append(f"run {i}: {r}")
                f = files[i]
                if shared.read_bytes(str(f)) != f.read_bytes():
                    failures.append(f"read {i}")
                st = shared.stat(str(f))
                if st is None or st.size != f.stat().st_size:
                    failures.append(f"stat {i}: {st}")
        except Exception as e:  # collected, so the assertion shows every failure
            failures.append(f"{i}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def test_link_lost_mid_command_is_a_connect_error(
    shared: SshTarget, sshd: SshServer, runtime: Path
) -> None:
    assert shared.run(["true"]).ok and shared._mux is not None
    old = shared._mux.pid
    tag = f"{time.time() % 1000 + 40:.4f}"
    outcome: dict[str, BaseException | None] = {}

    def worker() -> None:
        try:
            shared.run(["sleep", tag])
            outcome["error"] = None
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        assert _wait(lambda: _pgrep(f"sleep {tag}"), 10.0)
        assert sshd.kill_sessions() >= 1
        thread.join(timeout=15)
        assert not thread.is_alive(), "run() through the mux hung after the link dropped"
    finally:
        for pid in _pgrep(f"sleep {tag}"):
            os.kill(pid, signal.SIGKILL)
    err = outcome["error"]
    assert isinstance(err, ConnectError), err
    assert "lost" in err.message and "sleep" in err.message
    assert _wait(lambda: not _running(old))
    # The next call connects directly; closing starts a new server.
    assert shared.run(["echo", "back"]).stdout == b"back\n"
    shared.close()
    assert _ready_server(runtime) != old


def _pgrep(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle in cmdline:
                found.append(int(entry.name))
    return found


def test_racing_servers_leave_exactly_one(
    sshd: SshServer, isolated_home: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    host = _host(sshd)
    path = mux.socket_path(host, None)
    assert path is not None
    pids = [
        mux.spawn(host, path=path, ssh_config_path=None, connect_timeout=10, idle=600)
        for _ in range(3)
    ]
    winner = _ready_server(runtime)
    assert winner in pids
    assert _wait(lambda: [p for p in pids if _running(p)] == [winner])
    assert _logs(runtime).count("another server already serves this host") == 2


def test_socket_name_tracks_every_field_that_decides_what_runs(
    sshd: SshServer, isolated_home: Path
) -> None:
    """Item 1 of issue 10: python and env are part of the identity (they were not)."""
    from dataclasses import replace

    base = _host(sshd)
    key = mux.socket_key(base, None)
    assert key == mux.socket_key(replace(base), None)  # stable
    for change in (
        {"address": "localhost"},
        {"port": 1},
        {"user": "nobody"},
        {"identity": "/k"},
        {"known_hosts": "/kh"},
        {"name": "other"},
        {"python": "/other/python"},
        {"env": {"CUDA_VISIBLE_DEVICES": "1"}},
        {"workdir": "/elsewhere"},
    ):
        assert mux.socket_key(replace(base, **change), None) != key, change
    assert mux.socket_key(base, "/etc/ssh/ssh_config") != key
    config = isolated_home / ".ssh" / "config"
    config.write_text("Host x\n  Port 2\n")
    edited = mux.socket_key(base, None)
    assert edited != key  # an edited ~/.ssh/config: a new server
    # a ProxyJump in a file that ~/.ssh/config includes changes the route too
    (isolated_home / ".ssh" / "conf.d").mkdir()
    config.write_text("Include conf.d/*.conf\nHost x\n  Port 2\n")
    included = mux.socket_key(base, None)
    (isolated_home / ".ssh" / "conf.d" / "jump.conf").write_text("Host *\n  ProxyJump j\n")
    assert mux.socket_key(base, None) != included


def test_changed_python_never_reaches_the_old_interpreter(
    box: Path, env: dict[str, str], runtime: Path, tmp_path: Path, sshd: SshServer
) -> None:
    """Item 1 of issue 10: ``python =`` edited while a connection is kept."""
    first = _cli(box, env, "hosts", "--check", "--json", "-t", "box")
    assert first.code == 0, first.err
    old_python = json.loads(first.out)[0]["python"]["executable"]
    _ready_server(runtime)
    assert "via mux" in _cli(box, env, "hosts", "--check", "-t", "box").err

    other = sys.executable  # another interpreter on the same box (this test's venv)
    edited = _write_hosts(tmp_path, sshd.host_entry("box", python=other))
    direct = _cli(edited, env, "hosts", "--check", "--json", "-t", "box", HARNESS_SSH_PERSIST="0")
    want = json.loads(direct.out)[0]["python"]["executable"]
    assert want != old_python
    for _ in range(3):  # connecting directly, then through its own kept connection
        r = _cli(edited, env, "hosts", "--check", "--json", "-t", "box")
        assert r.code == 0, r.err
        assert json.loads(r.out)[0]["python"]["executable"] == want
    assert "via mux" in r.err
    assert _wait(lambda: len(_sockets(runtime)) == 2)


def test_two_inventories_naming_a_box_the_same_keep_their_interpreters(
    sshd: SshServer, seed_venv: SeedVenv, env: dict[str, str], runtime: Path, tmp_path: Path
) -> None:
    """Item 1 of issue 10: same name, same address, different ``python``: never crossed."""
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    a = _write_hosts(a_dir, sshd.host_entry("box", python=str(seed_venv.python)))
    b = _write_hosts(b_dir, sshd.host_entry("box", python=sys.executable))

    def python_of(hosts: Path) -> str:
        r = _cli(hosts, env, "hosts", "--check", "--json", "-t", "box")
        assert r.code == 0, r.err
        return str(json.loads(r.out)[0]["python"]["executable"])

    want_a, want_b = python_of(a), python_of(b)
    assert want_a != want_b
    assert _wait(lambda: len(_sockets(runtime)) == 2)
    for _ in range(2):
        assert python_of(a) == want_a
        assert python_of(b) == want_b


def test_a_server_for_another_entry_is_never_used(
    sshd: SshServer, isolated_home: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 1 of issue 10: even at the same socket path, a different identity is refused.

    The server was started for ``python3``; a client whose entry names another interpreter
    finds it at the path its own key gives (a collision forced here) and must go direct.
    """
    from dataclasses import replace

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("HARNESS_SSH_PERSIST", "600")
    host = _host(sshd)
    with SshTarget(host) as first:
        assert first.run(["true"]).ok
    _ready_server(runtime)
    (sock,) = _sockets(runtime)
    other = replace(host, python=sys.executable)
    monkeypatch.setattr(mux, "socket_path", lambda *_a, **_k: str(sock))
    t = SshTarget(other)
    try:
        r = t.run_python("import sys; print(sys.executable)", b"")
        assert r.stdout.decode().strip() == sys.executable
        assert t._mux is None and t._conn is not None  # it connected directly
    finally:
        t._spawn_path = None  # the path is the other server's: start nothing there
        t.close()
    # and the request itself names the interpreter: the server runs the one asked for
    hello = mux.ping(str(sock))
    assert hello is not None
    client = mux.MuxClient(str(sock), hello, 10.0)
    r = client.run_python("import sys; print(sys.executable)", b"", 30.0, sys.executable)
    assert r.stdout.decode().strip() == sys.executable


# -- the warm probe worker behind the kept connection ---------------------------------------


def _workers() -> list[int]:
    """Pids of probe workers (probes/zygote.py runs with its source on the command line)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if b"@@HARNESS-ZYGOTE-READY@@" in (d / "cmdline").read_bytes():
                    out.append(int(d.name))
            except OSError:
                pass
    return out


def test_probes_through_the_mux_run_in_a_warm_worker(
    box: Path, env: dict[str, str], runtime: Path, sshd: SshServer
) -> None:
    before = set(_workers())
    first = _cli(box, env, "probe", REF, "--json")
    assert first.code == 0, first.err
    _ready_server(runtime)
    second = _cli(box, env, "probe", REF, "--json")
    third = _cli(box, env, "probe", REF, "--json")
    assert second.code == third.code == 0, second.err + third.err
    assert json.loads(second.out)["symbols"] == json.loads(first.out)["symbols"]
    assert json.loads(third.out)["symbols"] == json.loads(first.out)["symbols"]
    from tests.support.sshd import _descendants

    # this sshd's: other suites on the machine may run workers of their own meanwhile
    workers = (set(_workers()) - before) & set(_descendants(sshd.pid))
    assert len(workers) == 1  # one worker served both probes: a fork each, not an exec
    # a worker that dies is replaced by the plain way, with the same answer
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    again = _cli(box, env, "probe", REF, "--json")
    assert again.code == 0, again.err
    assert json.loads(again.out)["symbols"] == json.loads(first.out)["symbols"]


def test_worker_keeps_errors_as_they_were(
    sshd: SshServer, env: dict[str, str], runtime: Path, tmp_path: Path
) -> None:
    """A missing remote python reads the same through the mux as without it."""
    hosts = _write_hosts(tmp_path, sshd.host_entry("box", python="/opt/nowhere/bin/python"))
    first = _cli(hosts, env, "probe", "vllm")
    assert first.code == 2 and "not found" in first.err
    _ready_server(runtime)
    second = _cli(hosts, env, "probe", "vllm")
    assert second.code == 2
    assert "python interpreter '/opt/nowhere/bin/python' not found" in second.err


def test_hosts_disconnect_closes_kept_connections(
    box: Path, env: dict[str, str], runtime: Path
) -> None:
    """Stopping kept connections is ``harness hosts --disconnect``, not a ``python -m`` line."""
    assert _cli(box, env, "probe", REF).code == 0
    pid = _ready_server(runtime)
    r = _cli(box, env, "hosts", "--disconnect", "-t", "box")
    assert (r.code, r.out.strip()) == (0, "closed 1 kept connection(s) to box"), r.err
    assert _wait(lambda: not _running(pid)) and _sockets(runtime) == []
    assert "connecting directly" in _cli(box, env, "probe", REF).err
    pid = _ready_server(runtime)
    r = _cli(box, env, "hosts", "--disconnect")
    assert (r.code, r.out.strip()) == (0, "closed 1 kept connection(s)"), r.err
    assert _wait(lambda: not _running(pid))
    r = _cli(box, env, "hosts", "--disconnect", "-t", "nosuch")
    assert r.code == 2 and "not a host in" in r.err
