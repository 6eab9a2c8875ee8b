"""``harness logs`` through the kept connection (issue 14): a run's log streams over the mux
server's SSH link, so the command imports no Paramiko; when that link drops mid-stream the
follower reconnects directly, and the local copy stays byte-exact."""

from __future__ import annotations

import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.targets import mux
from tests.integration.test_runs_ssh import Harness, box, sha, wait_for  # noqa: F401
from tests.support.sshd import SshServer

pytestmark = pytest.mark.ssh

HEAVY = ("paramiko", "fabric", "invoke", "cryptography")


@pytest.fixture
def kept(box: Harness) -> Iterator[Harness]:  # noqa: F811
    """``box`` with connection keeping on, in a short private runtime folder."""
    runtime = Path(tempfile.mkdtemp(prefix="hlm-", dir="/tmp"))
    box.env |= {
        "HARNESS_SSH_PERSIST": "600",
        "HARNESS_MUX_DEBUG": "1",
        "XDG_RUNTIME_DIR": str(runtime),
    }
    try:
        yield box
    finally:
        mux.stop_all(runtime / "harness-mux")
        shutil.rmtree(runtime, ignore_errors=True)


def _imported_heavy(stderr: str) -> list[str]:
    names = [line.split("|")[-1].strip() for line in stderr.splitlines() if "|" in line]
    return [n for n in names if n.split(".")[0] in HEAVY]


def _server_up(h: Harness) -> None:
    folder = Path(h.env["XDG_RUNTIME_DIR"]) / "harness-mux"
    wait_for(
        lambda: any(mux.ping(str(s)) for s in folder.glob("*.sock")),
        timeout=20,
        what="the mux server",
    )


def test_logs_stream_through_the_kept_connection_without_paramiko(kept: Harness) -> None:
    run_id = kept.launch("count", "n=30", "delay=0.01", "code=0")
    _server_up(kept)
    kept.status(run_id)  # finished
    shared = kept("logs", run_id, "-t", "box", PYTHONPROFILEIMPORTTIME="1")
    assert shared.code == 0, shared.err
    assert "via mux" in shared.err
    assert _imported_heavy(shared.err) == []
    direct = kept("logs", run_id, "-t", "box", HARNESS_SSH_PERSIST="0")
    assert direct.code == 0 and "via mux" not in direct.err
    assert shared.out == direct.out
    assert sha(kept.copy(run_id)) == sha(kept.run_dir(run_id) / "log")


def test_a_dropped_kept_link_mid_follow_reconnects_byte_exact(
    kept: Harness,
    sshd: SshServer,
) -> None:
    run_id = kept.launch("chatty", "n=150", "delay=0.02")
    _server_up(kept)
    with open(kept.cwd / "follow.out", "wb") as out:
        follow = kept.popen("logs", run_id, "-t", "box", "--follow", stdout=out)
        wait_for(lambda: kept.copy(run_id).exists() and kept.copy(run_id).stat().st_size > 20_000)
        assert sshd.kill_sessions() >= 1  # the mux server's SSH connection drops
        try:
            assert follow.wait(timeout=60) == 0  # the step's own exit code
        finally:
            if follow.poll() is None:
                follow.send_signal(signal.SIGKILL)
    err = follow.stderr.read().decode() if follow.stderr else ""
    assert "via mux" in err, err
    assert "lost" in err and "reconnected" in err, err
    remote = kept.run_dir(run_id) / "log"
    assert remote.read_bytes().endswith(b"done\n")
    assert sha(kept.copy(run_id)) == sha(remote)
    assert (kept.cwd / "follow.out").read_bytes() == remote.read_bytes()
