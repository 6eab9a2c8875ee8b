"""Patch faults on real targets: conflicts, escaping paths, concurrent applies, kills, drops.

The dist under patch is ``tinypkg`` 1.0 (``tests/fixtures/patchsets/``), installed by hand into
a fresh venv with a pip-style ``RECORD``: 0.1 s per test instead of a 1.3 GB venv copy, and a
fresh interpreter can import it (the real speculators imports torch). The "container" is that
venv reached over the real loopback sshd, or as a ``venv:`` target; every ``harness`` is a
fresh process, and the faults are real: SIGKILLed processes, killed sshd sessions, racing
processes. ``HARNESS_TEST_SWAP_DELAY`` makes the target-side probe sleep after each file swap
(and before its commit) so a test can strike between two swaps; over SSH it reaches the probe
through a wrapper script used as the host's ``python``.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.sshd import SshServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "patchsets"
PATCHED = FIXTURES / "tinypkg-1.0-patched"
SERIES_FILES = ("tinypkg/alpha.py", "tinypkg/beta.py", "tinypkg/gamma.py")
STATE = ".harness-patches"
DELAY_S = 1.0  # per swap: long enough to strike between two swaps on a loaded 2-core box


# -- the fixture dist ------------------------------------------------------------------------


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class Tiny:
    """A venv with tinypkg 1.0 installed the way pip leaves it (RECORD hashes and all)."""

    root: Path
    python: Path
    site: Path

    def path(self, rel: str) -> Path:
        return self.site / rel

    def read(self, rel: str) -> bytes:
        return (self.site / rel).read_bytes()

    @property
    def state(self) -> Path:
        return self.site / STATE

    def record(self) -> dict[str, str]:
        """RECORD's hex sha256 per file (the truth about what pip installed)."""
        out = {}
        for line in (self.site / "tinypkg-1.0.dist-info" / "RECORD").read_text().splitlines():
            rel, h, _size = line.rsplit(",", 2)
            if h:
                raw = h.removeprefix("sha256=")
                out[rel] = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
        return out

    def reinstall(self, rel: str, data: bytes) -> None:
        """Install new bytes for ``rel`` and update RECORD, as ``pip install`` of a rebuild."""
        self.path(rel).write_bytes(data)
        rec = self.site / "tinypkg-1.0.dist-info" / "RECORD"
        rows = [
            f"{rel},{record_hash(data)},{len(data)}" if row.startswith(rel + ",") else row
            for row in rec.read_text().splitlines()
        ]
        rec.write_text("\n".join(rows) + "\n")


def make_tiny(dest: Path) -> Tiny:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = dest / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    shutil.copytree(FIXTURES / "tinypkg-1.0" / "tinypkg", site / "tinypkg")
    info = site / "tinypkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
    (info / "INSTALLER").write_text("pip\n")
    rows = []
    for p in [*sorted((site / "tinypkg").iterdir()), info / "METADATA", info / "INSTALLER"]:
        data = p.read_bytes()
        rows.append(f"{p.relative_to(site)},{record_hash(data)},{len(data)}")
    rows.append("tinypkg-1.0.dist-info/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return Tiny(dest, python, site)


def snapshot(site: Path) -> dict[str, str]:
    """Every file and link under site-packages (dot-folders too) -> sha256 / link target."""
    out = {}
    for p in sorted(site.rglob("*")):
        rel = str(p.relative_to(site))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def installed(site: Path) -> dict[str, str]:
    """:func:`snapshot` without harness's own state folder: what the user's programs see."""
    return {k: v for k, v in snapshot(site).items() if not k.startswith(STATE)}


def leftovers(site: Path) -> list[str]:
    """Debris a write may leave: temp files, reject/backup files of patch(1), a live journal."""
    bad = [
        str(p.relative_to(site))
        for p in site.rglob("*")
        if p.name.endswith((".harness-tmp", ".rej", ".orig"))
    ]
    bad += [n for n in ("journal.json", "txn") if (site / STATE / n).exists()]
    return bad


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- running harness -------------------------------------------------------------------------


@pytest.fixture
def tiny(tmp_path: Path) -> Tiny:
    return make_tiny(tmp_path / "venv")


@pytest.fixture
def series(tmp_path: Path) -> Callable[[str], Path]:
    """A private copy of one fixture series root (``--patches DIR``)."""

    def copy(name: str) -> Path:
        dest = tmp_path / f"patches-{name}"
        shutil.copytree(FIXTURES / name, dest)
        return dest

    return copy


@dataclass(frozen=True)
class Harness:
    """``harness`` against one tiny venv, over SSH (``-t box``) or as ``venv:PATH``."""

    env: dict[str, str]
    tiny: Tiny
    patches: Path

    def __call__(self, *args: str, target: str = "box", **env: str) -> CliResult:
        return run_cli(*args, *self._common(target), env={**self.env, **env})

    def spawn(
        self, *args: str, target: str = "box", session: bool = False, **env: str
    ) -> subprocess.Popen[str]:
        """``session``: its own process group, which a test can Ctrl-C as a terminal does."""
        full = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **self.env, **env}
        return subprocess.Popen(
            [sys.executable, "-m", "harness", *args, *self._common(target)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
            start_new_session=session,
        )  # fmt: skip

    def _common(self, target: str) -> list[str]:
        t = f"venv:{self.tiny.root}" if target == "venv" else target
        return ["-t", t, "--patches", str(self.patches)]

    def states(self, target: str = "box") -> tuple[list[str], dict]:
        r = self("patches", "--json", target=target)
        assert r.code in (0, 1), r.err
        (report,) = json.loads(r.out)
        return [p["state"] for p in report["plan"]["patches"]], report


def slow_python(tmp_path: Path, python: Path, delay: float = DELAY_S) -> Path:
    """The host's ``python =``: exports the swap delay, then execs the venv's interpreter."""
    wrapper = tmp_path / "slow-python"
    wrapper.write_text(
        f"#!/bin/sh\nHARNESS_TEST_SWAP_DELAY={delay}\nexport HARNESS_TEST_SWAP_DELAY\n"
        f'exec {python} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def harness_for(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, patches: Path,
    python: Path | None = None,
) -> Harness:  # fmt: skip
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        'default = "box"\n' + sshd.host_entry("box", python=str(python or tiny.python))
    )
    env = {**cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": "0"}
    return Harness(env, tiny, patches)


# -- striking between two swaps --------------------------------------------------------------


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def journal_pid(tiny: Tiny) -> int | None:
    try:
        return int(json.loads((tiny.state / "journal.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def after_first_swap(tiny: Tiny, proc: subprocess.Popen[str]) -> int:
    """Wait until the probe swapped the first file (and sleeps before the second); its pid."""
    first = tiny.path(SERIES_FILES[0])
    want = (PATCHED / SERIES_FILES[0]).read_bytes()

    def swapped() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"harness ended before the first swap: {proc.communicate()}")
        return journal_pid(tiny) is not None and first.read_bytes() == want

    wait_for(swapped, "the first file swap")
    pid = journal_pid(tiny)
    assert pid is not None
    return pid


def our_probe(pid: int, python: Path) -> None:
    """Refuse to signal a pid that is not this test's probe (pids are reused)."""
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert cmdline[0] == os.fsencode(python) and b"-c" in cmdline, cmdline[:2]


def proc_state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return None


def gone(pid: int) -> bool:
    return proc_state(pid) in (None, "Z")


@contextlib.contextmanager
def reaped(*procs: subprocess.Popen[str]) -> Iterator[None]:
    try:
        yield
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.communicate()


def before_or_after(tiny: Tiny, before: dict[str, bytes]) -> dict[str, str]:
    """Each series file is exactly its before or its after bytes, never anything else."""
    out = {}
    for rel in SERIES_FILES:
        data = tiny.read(rel)
        after = (PATCHED / rel).read_bytes()
        assert data in (before[rel], after), f"{rel} is neither before nor after:\n{data!r}"
        out[rel] = "after" if data == after else "before"
    return out


# -- the tests -------------------------------------------------------------------------------


def test_conflict_in_third_file_changes_nothing(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("conflict"))
    before = snapshot(tiny.site)
    r = h("apply-patches")
    assert r.code == 1, (r.out, r.err)
    assert "nothing was written" in r.err
    assert "0003-gamma-walker: tinypkg/gamma.py: hunk @@ -6,7 +6,8 @@ (patch line 6)" in r.err
    assert "Traceback" not in r.err
    assert snapshot(tiny.site) == before  # not a byte, not a backup, not a state folder
    assert leftovers(tiny.site) == []
    assert not tiny.state.exists()
    # the report says which hunk and why: expected vs found lines
    states, report = h.states(target="venv")
    assert states == ["applies cleanly", "applies cleanly", "conflicts"]
    (c,) = report["plan"]["patches"][2]["conflicts"]
    assert c["file"] == "tinypkg/gamma.py" and c["patch_line"] == 6
    assert "        return self.model.layers\n" in c["expected"]
    assert "        return self.model.model.layers\n" in c["found"]
    r = h("patches")
    assert r.code == 1 and "expected:" in r.out and "found:" in r.out
    assert h("apply-patches", "--dry-run", target="venv").code == 1
    assert snapshot(tiny.site) == before


@pytest.mark.parametrize(
    ("name", "bad_path"),
    [("dotdot", "tinypkg/../../../outside.py"), ("absolute", "/tmp/harness-patch-test-outside.py")],
)
def test_paths_leaving_site_packages_are_refused_with_file_line(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny, series: Callable, name: str,
    bad_path: str,
) -> None:  # fmt: skip
    patches = series(name)
    (patch,) = (patches / "tinypkg" / "1.0").glob("*.patch")
    line = next(
        n for n, text in enumerate(patch.read_text().splitlines(), 1) if text.startswith("--- ")
        and bad_path in text
    )  # fmt: skip
    outside = tiny.root / "outside.py"  # where tinypkg/../../../outside.py would land
    outside.write_text("SECRET = 1\n")
    before = snapshot(tiny.site)
    h = Harness({**cli_env}, tiny, patches)
    for cmd in (("apply-patches",), ("apply-patches", "--force"), ("patches",)):
        r = h(*cmd, target="venv")
        assert r.code == 2, (cmd, r.out, r.err)
        assert f"{patch}:{line}: path {bad_path!r} leaves site-packages" in r.err
        assert "Traceback" not in r.err
    assert snapshot(tiny.site) == before and not tiny.state.exists()
    assert outside.read_text() == "SECRET = 1\n"


@pytest.mark.parametrize("link", ["folder", "file"])
def test_symlink_out_of_site_packages_is_refused(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny, series: Callable, link: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "extra.py").write_text("EXTRA = 1\n")
    plugins = tiny.path("tinypkg/plugins")
    if link == "folder":
        plugins.symlink_to(outside, target_is_directory=True)
    else:
        plugins.mkdir()
        (plugins / "extra.py").symlink_to(outside / "extra.py")
    before = snapshot(tiny.site)
    h = Harness({**cli_env}, tiny, series("symlink"))
    for cmd in (("apply-patches",), ("apply-patches", "--force")):
        r = h(*cmd, target="venv")
        assert r.code == 2, (r.out, r.err)
        assert "tinypkg/plugins/extra.py: resolves outside site-packages" in r.err
        assert f"through a symlink to {outside / 'extra.py'}" in r.err
    assert (outside / "extra.py").read_text() == "EXTRA = 1\n"
    assert snapshot(tiny.site) == before and not tiny.state.exists()


def test_two_concurrent_applies_one_wins_the_other_names_the_holder(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """One apply over SSH, one on the same site-packages as ``venv:``, started together."""
    slow = slow_python(tmp_path, tiny.python)
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("good"), python=slow)
    a = h.spawn("apply-patches")
    b = h.spawn("apply-patches", target="venv", HARNESS_TEST_SWAP_DELAY=str(DELAY_S))
    with reaped(a, b):
        results = [(p.wait(60), *p.communicate()) for p in (a, b)]
    codes = sorted(code for code, _out, _err in results)
    assert codes == [0, 2], results
    _, win_out, _ = next(r for r in results if r[0] == 0)
    _, _, lose_err = next(r for r in results if r[0] == 2)
    assert "applied: 3 file(s) written" in win_out
    holder = f"{getpass.getuser()}@{socket.gethostname()} pid "
    assert "is being patched by another harness: " + holder in lose_err, lose_err
    assert re.search(r"pid \d+ \(apply-patches\) since \d{4}-\d\d-\d\d", lose_err), lose_err
    # consistent: everything applied exactly once, nothing left over, the lock is free
    for rel in SERIES_FILES:
        assert tiny.read(rel) == (PATCHED / rel).read_bytes()
    assert leftovers(tiny.site) == [] and not (tiny.state / "lock.json").exists()
    states, report = h.states(target="venv")
    assert states == ["applied"] * 3 and report["lock"] is None


def test_sigkilled_apply_over_ssh_is_reported_and_rolled_back(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """harness and its target-side probe SIGKILLed between two swaps: the next run repairs."""
    slow = slow_python(tmp_path, tiny.python)
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("good"), python=slow)
    before = {rel: tiny.read(rel) for rel in SERIES_FILES}
    everything = installed(tiny.site)
    proc = h.spawn("apply-patches")
    with reaped(proc):
        pid = after_first_swap(tiny, proc)
        our_probe(pid, tiny.python)
        os.kill(pid, signal.SIGKILL)
        proc.kill()
        wait_for(lambda: gone(pid), "the killed probe to exit")
    assert before_or_after(tiny, before) == {
        "tinypkg/alpha.py": "after",
        "tinypkg/beta.py": "before",
        "tinypkg/gamma.py": "before",
    }  # fmt: skip -- half-applied right now: exactly what the journal is for
    r = h("patches")
    assert r.code == 0, r.err
    assert f"recovered an interrupted write (pid {pid}): rolled back tinypkg/alpha.py" in r.out
    assert installed(tiny.site) == everything  # byte-identical, temp files gone
    assert leftovers(tiny.site) == []
    assert r.out.count("applies cleanly") == 3 and "edited by hand" not in r.out


def test_killed_probe_is_recovered_while_its_zombie_is_unreaped(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """A container whose PID 1 never reaps: the dead probe's pid still answers ``kill -0``.

    harness (the probe's parent, ``venv:`` target) is stopped, so the SIGKILLed probe stays a
    zombie; recovery must not take that for a live transaction. Then a reinstall changes a
    file: the next apply must back up the *new* file, not a stale copy from the dead attempt.
    """
    h = Harness({**cli_env}, tiny, series("good"))
    before = {rel: tiny.read(rel) for rel in SERIES_FILES}
    proc = h.spawn("apply-patches", target="venv", HARNESS_TEST_SWAP_DELAY=str(DELAY_S))
    with reaped(proc):
        pid = after_first_swap(tiny, proc)
        our_probe(pid, tiny.python)
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: proc_state(pid) == "Z", "the probe to become a zombie")
            r = h("patches", target="venv")
            assert r.code == 0, r.err
            assert f"recovered an interrupted write (pid {pid})" in r.out
            assert all(tiny.read(rel) == before[rel] for rel in SERIES_FILES)
            assert leftovers(tiny.site) == []
        finally:
            proc.kill()
            os.kill(proc.pid, signal.SIGCONT)
    # a rebuilt tinypkg 1.0 is installed over it (beta.py differs, below the hunks)
    rebuilt = before["tinypkg/beta.py"] + b"# rebuilt\n"
    tiny.reinstall("tinypkg/beta.py", rebuilt)
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert tiny.read("tinypkg/beta.py").endswith(b"# rebuilt\n")
    r = h("revert-patches", target="venv")
    assert r.code == 0, r.err
    assert tiny.read("tinypkg/beta.py") == rebuilt  # not the stale pre-rebuild backup
    record = tiny.record()
    assert all(sha(tiny.read(rel)) == record[rel] for rel in SERIES_FILES)


def test_kill_after_manifest_before_commit_rolls_back_the_manifest_too(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """Struck after every swap and the manifest save, just before the journal goes."""
    h = Harness({**cli_env}, tiny, series("good"))
    before = {rel: tiny.read(rel) for rel in SERIES_FILES}
    proc = h.spawn("apply-patches", target="venv", HARNESS_TEST_SWAP_DELAY=str(DELAY_S))
    manifest = tiny.state / "manifest.json"

    def manifest_saved() -> bool:
        try:
            return "tinypkg" in json.loads(manifest.read_text())
        except (OSError, ValueError):
            return False

    with reaped(proc):
        pid = after_first_swap(tiny, proc)
        wait_for(manifest_saved, "the manifest save")
        assert journal_pid(tiny) == pid  # not committed yet
        our_probe(pid, tiny.python)
        os.kill(pid, signal.SIGKILL)
        proc.kill()
        wait_for(lambda: gone(pid), "the killed probe to exit")
    states, report = h.states(target="venv")
    assert report["recovered"]["rolled_back"] == list(SERIES_FILES)
    assert all(tiny.read(rel) == before[rel] for rel in SERIES_FILES)
    # the manifest must not claim patches that were rolled back
    assert states == ["applies cleanly"] * 3
    assert not manifest.exists()  # as before the apply: there was none
    r = h("revert-patches", target="venv")
    assert r.code == 0 and "nothing to revert" in r.out


def test_dropped_ssh_link_mid_apply_never_leaves_a_half_series(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    slow = slow_python(tmp_path, tiny.python, delay=DELAY_S / 2)  # the orphan then runs on
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("good"), python=slow)
    before = {rel: tiny.read(rel) for rel in SERIES_FILES}
    proc = h.spawn("apply-patches")
    with reaped(proc):
        pid = after_first_swap(tiny, proc)
        our_probe(pid, tiny.python)
        assert sshd.kill_sessions() >= 1
        code = proc.wait(30)
        _out, err = proc.communicate()
    assert code == 2, err
    assert re.search(r"connection to box \(.*\) lost while running", err), err
    assert "Traceback" not in err
    # the target side finishes its transaction (or a later run rolls it back): wait for it
    wait_for(lambda: journal_pid(tiny) is None or gone(pid), "the orphaned probe", timeout=30)
    r = h("patches", "--json")
    assert r.code == 0, r.err
    (report,) = json.loads(r.out)
    sides = set(before_or_after(tiny, before).values())
    assert len(sides) == 1, sides  # all before or all after, never half
    want = "applied" if sides == {"after"} else "applies cleanly"
    assert [p["state"] for p in report["plan"]["patches"]] == [want] * 3
    assert report["hand_edited"] == [] and leftovers(tiny.site) == []


def test_hand_edit_is_refused_without_force_and_reverts_exactly(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("good"))
    edited = tiny.read("tinypkg/beta.py") + b"# tuned by hand on the box\n"
    tiny.path("tinypkg/beta.py").write_bytes(edited)
    tiny.path("tinypkg/beta.py").chmod(0o600)  # modes are kept through apply and revert
    everything = snapshot(tiny.site)
    r = h("patches")
    assert "edited by hand tinypkg/beta.py" in r.out
    assert "refused tinypkg/beta.py: differs from what pip installed (RECORD)" in r.out
    r = h("apply-patches", target="venv")
    assert r.code == 1
    assert "tinypkg/beta.py: differs from what pip installed (RECORD)" in r.err
    assert "--force" in r.err
    assert snapshot(tiny.site) == everything
    r = h("apply-patches", "--force")
    assert r.code == 0, r.err
    assert "applied: 3 file(s) written" in r.out
    want_beta = (PATCHED / "tinypkg/beta.py").read_bytes() + b"# tuned by hand on the box\n"
    assert tiny.read("tinypkg/beta.py") == want_beta  # the patch and the hand edit
    assert tiny.path("tinypkg/beta.py").stat().st_mode & 0o777 == 0o600
    states, report = h.states(target="venv")
    assert states == ["applied"] * 3 and report["hand_edited"] == []
    r = h("revert-patches", target="venv")  # back to what was there before harness: the hand edit
    assert r.code == 0, r.err
    assert tiny.read("tinypkg/beta.py") == edited
    assert tiny.path("tinypkg/beta.py").stat().st_mode & 0o777 == 0o600
    assert installed(tiny.site) == everything


def test_fresh_interpreter_sees_the_patched_module_pyc_trap(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """Same size, same mtime second: only a removed ``__pycache__`` entry makes Python see it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    mtime = 1_700_000_000

    def value(python: Path, path: Path | None = None) -> str:
        code = "import tinypkg.consts as c; print(c.VALUE)"
        if path is not None:
            code = (
                f"import sys; sys.path.insert(0, {str(path)!r}); import consts; print(consts.VALUE)"
            )
        return subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, env=env, check=True
        ).stdout.strip()

    # the trap is real: without the pycache removal, Python keeps running the old constant
    control = tmp_path / "control"
    control.mkdir()
    (control / "consts.py").write_text("VALUE = 1111\n")
    os.utime(control / "consts.py", (mtime, mtime))
    assert value(tiny.python, control) == "1111"
    (control / "consts.py").write_text("VALUE = 2222\n")
    os.utime(control / "consts.py", (mtime, mtime))
    assert value(tiny.python, control) == "1111"

    consts = tiny.path("tinypkg/consts.py")
    os.utime(consts, (mtime, mtime))
    assert value(tiny.python) == "1111"
    pycache = consts.parent / "__pycache__"
    pyc = sorted(p.name for p in pycache.iterdir())
    assert any(n.startswith("consts.") for n in pyc) and any(n.startswith("__init__.") for n in pyc)
    h = harness_for(tmp_path, sshd, cli_env, tiny, series("pyc-trap"))
    r = h("apply-patches")
    assert r.code == 0, r.err
    assert tiny.read("tinypkg/consts.py") == (PATCHED / "tinypkg/consts.py").read_bytes()
    left = sorted(p.name for p in pycache.iterdir())
    assert not any(n.startswith("consts.") for n in left)  # the stale entry is gone ...
    assert any(n.startswith("__init__.") for n in left)  # ... and only that one
    os.utime(consts, (mtime, mtime))  # as if patched within the same second
    assert value(tiny.python) == "2222"
    r = h("revert-patches", target="venv")
    assert r.code == 0, r.err
    os.utime(consts, (mtime, mtime))
    assert value(tiny.python) == "1111"


def test_installed_version_without_a_series_names_the_versions_that_have_one(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny
) -> None:
    patches = tmp_path / "patches"
    for version in ("0.9", "2.0"):
        shutil.copytree(FIXTURES / "good" / "tinypkg" / "1.0", patches / "tinypkg" / version)
    h = Harness({**cli_env}, tiny, patches)
    before = snapshot(tiny.site)
    r = h("patches", target="venv")
    assert r.code == 0, r.err
    assert "no series for tinypkg 1.0; series exist for: 0.9, 2.0" in r.out
    r = h("apply-patches", target="venv")
    assert r.code == 0 and "nothing written: no patch of the series applies here" in r.out
    r = h("apply-patches", "--dist", "tinypkg", target="venv")
    assert r.code == 2 and "no series for tinypkg 1.0; series exist for: 0.9, 2.0" in r.err
    assert snapshot(tiny.site) == before


def test_new_and_deleted_files_apply_and_revert_exactly(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """A ``/dev/null`` patch: the new file goes on revert, the deleted one comes back."""
    h = Harness({**cli_env}, tiny, series("new-and-gone"))
    consts, plugin = tiny.path("tinypkg/consts.py"), tiny.path("tinypkg/plugin.py")
    consts.chmod(0o640)
    everything = installed(tiny.site)
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert "applied: 2 file(s) written" in r.out
    assert not consts.exists()  # deleted, not truncated to 0 bytes
    assert plugin.read_text() == '"""Added by a patch."""\n\nNAME = "plugin"\n'
    states, _ = h.states(target="venv")
    assert states == ["applied"]
    r = h("apply-patches", target="venv")
    assert r.code == 0 and "already applied: nothing written" in r.out
    r = h("revert-patches", target="venv")
    assert r.code == 0, r.err
    assert not plugin.exists()
    assert installed(tiny.site) == everything
    assert consts.stat().st_mode & 0o777 == 0o640
    assert sha(consts.read_bytes()) == tiny.record()["tinypkg/consts.py"]


def test_make_patch_is_based_on_what_was_applied_not_on_skipped_patches(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """A gated-off patch of the same file must not leak into the base of the new patch."""
    patches = series("gated")
    h = Harness({**cli_env}, tiny, patches)
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert "skipped          0002-alpha-louder" in r.out
    alpha = tiny.path("tinypkg/alpha.py")
    alpha.write_text(alpha.read_text().replace('"""Say hello."""', '"""Say hello (tuned)."""'))
    edited = alpha.read_bytes()
    r = h("make-patch", "tinypkg", "--name", "tune", "--why", "a docstring", target="venv")
    assert r.code == 0, r.err
    new = (patches / "tinypkg" / "1.0" / "0003-tune.patch").read_text()
    assert '+    """Say hello (tuned)."""' in new and "upper()" not in new
    # reinstall (pip puts the pristine file back), then the series with the new patch
    shutil.copy(FIXTURES / "tinypkg-1.0" / "tinypkg" / "alpha.py", alpha)
    states, _ = h.states(target="venv")
    assert states == ["applies cleanly", "skipped", "applies cleanly"]
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert alpha.read_bytes() == edited


def test_make_patch_over_ssh_records_the_edit_as_applied_and_revert_restores_pristine(
    tmp_path: Path, sshd: SshServer, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """Patch, hand-edit a patched file, make-patch: the box is the series through the new
    patch (nothing to apply, no hand edit), and revert-patches goes back to what pip put."""
    patches = series("good")
    h = harness_for(tmp_path, sshd, cli_env, tiny, patches)
    pristine = installed(tiny.site)
    assert h("apply-patches").code == 0
    alpha = tiny.path("tinypkg/alpha.py")
    alpha.write_text(alpha.read_text() + "# tuned on the box\n")
    alpha.chmod(0o600)
    edited = snapshot(tiny.site)
    r = h("make-patch", "tinypkg", "--name", "tune")
    assert r.code == 0, r.err
    assert "recorded as applied on box" in r.out
    assert (patches / "tinypkg" / "1.0" / "0004-tune.patch").is_file()
    assert installed(tiny.site) == {k: v for k, v in edited.items() if not k.startswith(STATE)}
    states, report = h.states()
    assert states == ["applied"] * 4 and report["hand_edited"] == []
    r = h("apply-patches")
    assert r.code == 0 and "already applied: nothing written" in r.out, r.out + r.err
    r = h("revert-patches")
    assert r.code == 0, r.err
    assert installed(tiny.site) == pristine and leftovers(tiny.site) == []
    assert alpha.stat().st_mode & 0o777 == 0o600
    # and the series with the new patch gives the edited file back, byte for byte
    assert h("apply-patches").code == 0
    assert snapshot(tiny.site)["tinypkg/alpha.py"] == edited["tinypkg/alpha.py"]


def test_applied_patch_whose_text_changed_is_not_applied(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """Item 2 of issue 10: the manifest's text is compared, shown, and apply refuses."""
    patches = series("good")
    h = Harness({**cli_env}, tiny, patches)
    assert h("apply-patches", target="venv").code == 0
    patch = patches / "tinypkg" / "1.0" / "0002-beta-limit.patch"
    # a comment-only edit is the same change: still applied
    patch.write_text("Raise the limit (reworded).\n" + patch.read_text().split("\n", 1)[1])
    states, _ = h.states(target="venv")
    assert states == ["applied"] * 3
    # a changed hunk is another change: the files hold the old one
    patch.write_text(patch.read_text().replace("+LIMIT = 100", "+LIMIT = 1000"))
    applied_files = installed(tiny.site)
    states, report = h.states(target="venv")
    assert states == ["applied", "applied (an older text of this patch)", "applied"]
    stale = report["plan"]["patches"][1]
    assert "-+LIMIT = 100\n" in stale["text_diff"] and "++LIMIT = 1000\n" in stale["text_diff"]
    r = h("patches", target="venv")
    assert r.code == 1, r.out
    assert "applied (an older text of this patch) 0002-beta-limit" in r.out
    assert "-+LIMIT = 100" in r.out and "++LIMIT = 1000" in r.out
    for cmd in (("apply-patches",), ("apply-patches", "--force")):
        r = h(*cmd, target="venv")
        assert r.code == 1, (r.out, r.err)
        assert "nothing was written: tinypkg 0002-beta-limit is applied from an older text" in r.err
        assert "already applied" not in r.out + r.err
        assert f"harness revert-patches -t venv:{tiny.root} --patches {patches}" in r.err
        assert "Traceback" not in r.err
    assert installed(tiny.site) == applied_files
    # the way out works: revert, then apply the new text
    assert h("revert-patches", target="venv").code == 0
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert b"LIMIT = 1000\n" in tiny.read("tinypkg/beta.py")
    states, _ = h.states(target="venv")
    assert states == ["applied"] * 3


# -- item 3 of issue 10: a dist's series stays inside that dist -------------------------------

OTHER_INIT = '"""Another dist in the same site-packages."""\n\nMODE = "safe"\n'
CONSTS = (FIXTURES / "tinypkg-1.0" / "tinypkg" / "consts.py").read_text()


def install_other(tiny: Tiny) -> None:
    """``otherpkg`` 2.0, installed by pip beside tinypkg (its own RECORD)."""
    (tiny.site / "otherpkg").mkdir()
    (tiny.site / "otherpkg" / "__init__.py").write_text(OTHER_INIT)
    info = tiny.site / "otherpkg-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: otherpkg\nVersion: 2.0\n")
    rows = [
        f"{rel},{record_hash((tiny.site / rel).read_bytes())},1"
        for rel in ("otherpkg/__init__.py", "otherpkg-2.0.dist-info/METADATA")
    ]
    (info / "RECORD").write_text("\n".join([*rows, "otherpkg-2.0.dist-info/RECORD,,"]) + "\n")


def _new_file(path: str) -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+import os; os.system('true')\n"


def _edit(path: str, text: str, old: str, new: str) -> str:
    import difflib

    return "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            text.replace(old, new).splitlines(keepends=True),
            f"a/{path}",
            f"b/{path}",
        )
    )


HOSTILE = {
    "other-dists-file": (
        _edit("otherpkg/__init__.py", OTHER_INIT, '"safe"', '"pwned"'),
        "otherpkg/__init__.py belongs to otherpkg (its RECORD lists it), not tinypkg",
    ),
    "pth": (_new_file("tinypkg/evil.pth"), "is a .pth file"),
    "sitecustomize": (_new_file("sitecustomize.py"), "is sitecustomize.py"),
    "usercustomize": (_new_file("tinypkg/usercustomize.py"), "is usercustomize.py"),
    "top-level-module": (_new_file("tinypkg_helpers.py"), "is at the top of site-packages"),
    "dist-info": (
        _edit(
            "tinypkg-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
            "1.0\n",
            "1.0+patched\n",
        ),
        "is install metadata (.dist-info)",
    ),
    "new-package": (
        _new_file("newpkg/__init__.py"),
        "would create a file outside tinypkg's packages (tinypkg)",
    ),
    "unrecorded-file": (
        _edit("tinypkg/notes.py", CONSTS, "1111", "2222"),
        "tinypkg/notes.py is not a file tinypkg installed",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_series_may_only_write_its_own_dist(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny, case: str
) -> None:
    install_other(tiny)
    (tiny.site / "tinypkg" / "notes.py").write_text(CONSTS)  # the user's, not pip's
    body, reason = HOSTILE[case]
    patches = tmp_path / "patches"
    folder = patches / "tinypkg" / "1.0"
    folder.mkdir(parents=True)
    (folder / "0001-hostile.patch").write_text(f"A hostile patch ({case}).\n\n{body}")
    (folder / "series.toml").write_text('[[patch]]\nfile = "0001-hostile.patch"\nwhy = "x"\n')
    before = snapshot(tiny.site)
    h = Harness({**cli_env}, tiny, patches)
    for cmd in (("apply-patches",), ("apply-patches", "--force"), ("patches",)):
        r = h(*cmd, target="venv")
        assert r.code == 2, (case, cmd, r.out, r.err)
        assert f"{folder / '0001-hostile.patch'}:3: " in r.err and reason in r.err, r.err
        assert "nothing was written" in r.err and "Traceback" not in r.err
        assert "a series under patches/tinypkg/ changes only files tinypkg installed" in r.err
    assert snapshot(tiny.site) == before and not tiny.state.exists()


def test_other_dists_series_patches_its_own_files(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny
) -> None:
    """The way out the refusal names: the same change as a series under otherpkg's name."""
    install_other(tiny)
    folder = tmp_path / "patches" / "otherpkg" / "2.0"
    folder.mkdir(parents=True)
    (folder / "0001-mode.patch").write_text(
        _edit("otherpkg/__init__.py", OTHER_INIT, '"safe"', '"fast"')
    )
    (folder / "series.toml").write_text('[[patch]]\nfile = "0001-mode.patch"\nwhy = "x"\n')
    h = Harness({**cli_env}, tiny, tmp_path / "patches")
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert 'MODE = "fast"' in (tiny.site / "otherpkg" / "__init__.py").read_text()


def test_make_patch_keeps_another_dists_edit_out_of_the_series(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny
) -> None:
    install_other(tiny)
    (tiny.site / "otherpkg" / "__init__.py").write_text(OTHER_INIT.replace("safe", "edited"))
    patches = tmp_path / "patches"
    h = Harness({**cli_env}, tiny, patches)
    r = h("make-patch", "tinypkg", "otherpkg/__init__.py", "--name", "x", target="venv")
    assert r.code == 2, (r.out, r.err)
    assert "otherpkg/__init__.py belongs to otherpkg (its RECORD lists it), not tinypkg" in r.err
    assert "harness make-patch OTHER_DIST otherpkg/__init__.py" in r.err
    assert not patches.exists()


# -- item 5 of issue 10: Ctrl-C says what state it left ----------------------------------------


def ctrl_c(proc: subprocess.Popen[str]) -> None:
    """What a terminal does on Ctrl-C: SIGINT to the whole foreground process group."""
    os.killpg(proc.pid, signal.SIGINT)


def test_ctrl_c_mid_write_finishes_the_series_and_says_so(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    patches = series("good")
    h = Harness({**cli_env}, tiny, patches)
    proc = h.spawn(
        "apply-patches", target="venv", session=True, HARNESS_TEST_SWAP_DELAY=str(DELAY_S)
    )
    with reaped(proc):
        after_first_swap(tiny, proc)
        ctrl_c(proc)  # the probe gets it too, as from a terminal
        code = proc.wait(60)
        _out, err = proc.communicate()
    assert code == 130, err
    assert err.splitlines() == [
        "interrupted: the series is fully applied (3 file(s) written); see it with: "
        f"harness patches -t venv:{tiny.root} --patches {patches}"
    ]
    for rel in SERIES_FILES:
        assert tiny.read(rel) == (PATCHED / rel).read_bytes()
    assert leftovers(tiny.site) == []
    states, _ = h.states(target="venv")
    assert states == ["applied"] * 3


def test_ctrl_c_before_the_write_leaves_nothing_written(
    tmp_path: Path, cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    calls = tmp_path / "calls"
    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\necho "$$" >> {calls}\nsleep 5\nexec {tiny.python} "$@"\n')
    slow.chmod(0o755)
    patches = series("good")
    h = Harness({**cli_env}, tiny, patches)
    before = snapshot(tiny.site)
    proc = h.spawn("apply-patches", target=f"local:{slow}", session=True)
    with reaped(proc):
        wait_for(calls.exists, "the first probe (reading the target)")
        ctrl_c(proc)
        code = proc.wait(60)
        _out, err = proc.communicate()
    assert code == 130, err
    assert err.splitlines() == [
        f"interrupted: nothing written; see it with: harness patches -t local:{slow} "
        f"--patches {patches}"
    ]
    assert snapshot(tiny.site) == before


def test_ctrl_c_then_the_write_dies_reads_back_rolled_back(
    cli_env: dict[str, str], tiny: Tiny, series: Callable
) -> None:
    """The transaction dies after the Ctrl-C (a crash, an OOM kill): harness reads it back."""
    h = Harness({**cli_env}, tiny, series("good"))
    everything = installed(tiny.site)
    proc = h.spawn(
        "apply-patches", target="venv", session=True, HARNESS_TEST_SWAP_DELAY=str(DELAY_S)
    )
    with reaped(proc):
        pid = after_first_swap(tiny, proc)
        ctrl_c(proc)
        time.sleep(0.3)  # harness has taken the Ctrl-C and keeps waiting for the write
        our_probe(pid, tiny.python)
        os.kill(pid, signal.SIGKILL)
        code = proc.wait(60)
        _out, err = proc.communicate()
    assert code == 130, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("interrupted: rolled back: the files are as they were before; see it")
    assert installed(tiny.site) == everything and leftovers(tiny.site) == []
