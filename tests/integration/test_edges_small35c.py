"""Issue 35 item 13, the rest: one test each (real CLI processes, a real venv, no mocks).

- two patches of one series numbered alike (0001-a, 0001-b: made apart) are named, not applied.
- ``patches --patches DIR`` names DIR's series folder, not the default ``patches/``.
- ``check`` over SSH ended with a hint meant for ``pypi:`` targets.
- a log without a final newline had the verdict glued to its last line (``2>&1``); stdout
  alone stays the log byte for byte.
- ``cache prune --all`` said "nothing to prune" while ``cache list`` showed run log copies:
  ``--all`` is every entry listed; a prune that keeps some says which and why.
- ``revert-patches`` after pip installed the patched files again: they are pip's; it says so,
  and ``--forget`` drops harness's record of them, writing none of them.
- ``run STEP`` while STEP is already running on the target: the preflight warns, naming it.
- ``apply-patches`` / ``revert-patches`` under a live run: a warning names it first.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.integration.test_patches_faults import FIXTURES, make_tiny
from tests.integration.test_runs_ssh import Harness, base_env, local_harness
from tests.support.cli import run_cli
from tests.support.sshd import SshServer


def _series(tmp_path: Path) -> Path:
    dest = tmp_path / "elsewhere" / "my-series"
    shutil.copytree(FIXTURES / "good", dest)
    return dest


def test_patches_names_the_folder_given(cli_env: dict[str, str], tmp_path: Path) -> None:
    tiny = make_tiny(tmp_path / "venv")
    root = _series(tmp_path)
    r = run_cli("patches", "-t", f"venv:{tiny.root}", "--patches", str(root), env=cli_env)
    assert r.code == 0, r.out + r.err
    assert f"series {root / 'tinypkg' / '1.0'}" in r.out, r.out
    assert "series patches/" not in r.out


def test_two_patches_numbered_alike_are_named(cli_env: dict[str, str], tmp_path: Path) -> None:
    tiny = make_tiny(tmp_path / "venv")
    root = _series(tmp_path)
    folder = root / "tinypkg" / "1.0"
    (folder / "0002-beta-limit.patch").rename(folder / "0001-beta-limit.patch")
    toml = folder / "series.toml"
    toml.write_text(toml.read_text().replace("0002-beta-limit", "0001-beta-limit"))
    before = tiny.read("tinypkg/alpha.py")
    r = run_cli("apply-patches", "-t", f"venv:{tiny.root}", "--patches", str(root), env=cli_env)
    assert r.code != 0, r.out + r.err
    assert f"{toml}:7: patch.file: 0001-beta-limit.patch is numbered like " in r.err, r.err
    assert "0001-alpha-greeting.patch (both 0001)" in r.err, r.err
    assert "Traceback" not in r.err
    assert tiny.read("tinypkg/alpha.py") == before


def _caller(site: Path, *imports: str) -> None:
    """A dist ``usesit`` 1.0, one module per name in ``imports`` importing it (as pip would)."""
    (site / "usesit").mkdir()
    rows = ["usesit/__init__.py,,"]
    (site / "usesit" / "__init__.py").write_text("")
    for name in imports:
        (site / "usesit" / f"use_{name}.py").write_text(f"import {name}\n")
        rows.append(f"usesit/use_{name}.py,,")
    info = site / "usesit-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: usesit\nVersion: 1.0\n")
    (info / "RECORD").write_text("\n".join([*rows, "usesit-1.0.dist-info/RECORD,,"]) + "\n")


def test_check_over_ssh_gives_no_pypi_hint(sshd: SshServer, tmp_path: Path) -> None:
    tiny = make_tiny(tmp_path / "venv")
    _caller(tiny.site, "tinypkg", "notinstalled")
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=str(tiny.python)))
    env = base_env(tmp_path) | {"HARNESS_HOSTS": str(hosts)}
    r = run_cli("check", "usesit", "-t", "box", "--no-baseline", env=env)
    assert "notinstalled, not installed on box" in r.out, r.out + r.err
    assert "pypi:" not in r.out + r.err, r.out + r.err
    shutil.rmtree(tiny.site / "tinypkg")  # now nothing it imports is there
    r = run_cli("check", "usesit", "-t", "box", "--no-baseline", env=env)
    assert r.code != 0 and "nothing to check" in r.err, r.out + r.err
    assert "pypi:" not in r.err and "hint: install what usesit imports" in r.err, r.err


def test_the_verdict_starts_its_own_line(tmp_path: Path) -> None:
    h = local_harness(tmp_path, '[steps.say]\ncommand = ["printf", "no final newline"]\n')
    both = subprocess.run(
        h.argv("run", "say", "-t", "local"), cwd=h.cwd, env=h.env, check=False,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60,
    )  # fmt: skip
    assert both.returncode == 0, both.stdout
    assert "no final newline\n✓ say-" in both.stdout, both.stdout
    alone = h("run", "say", "-t", "local")
    assert alone.code == 0 and alone.out == "no final newline", (alone.out, alone.err)


def test_cache_prune_all_prunes_what_cache_list_shows(tmp_path: Path) -> None:
    h = local_harness(tmp_path, '[steps.say]\ncommand = ["echo", "hi"]\n')
    assert h("run", "say", "-t", "local").code == 0  # leaves a local copy of the run's log
    listed = json.loads(h("cache", "list", "--json").out)["entries"]
    assert [e["kind"] for e in listed] == ["runs"], listed
    fresh = h("cache", "prune")
    assert fresh.code == 0 and "nothing to prune" in fresh.out, fresh.out + fresh.err
    assert "kept 1 (" in fresh.out and "): run log copies (add --runs)" in fresh.out, fresh.out
    r = h("cache", "prune", "--all")
    assert r.code == 0 and "removed runs local/say-" in r.out, r.out + r.err
    assert "kept" not in r.out, r.out
    assert json.loads(h("cache", "list", "--json").out)["entries"] == []


def test_revert_after_pip_reinstalled_the_files(cli_env: dict[str, str], tmp_path: Path) -> None:
    tiny = make_tiny(tmp_path / "venv")
    root = _series(tmp_path)
    t = ["-t", f"venv:{tiny.root}", "--patches", str(root)]
    assert run_cli("apply-patches", *t, env=cli_env).code == 0
    pristine = FIXTURES / "tinypkg-1.0"
    for rel in ("tinypkg/alpha.py", "tinypkg/gamma.py"):  # pip install --force-reinstall
        tiny.reinstall(rel, (pristine / rel).read_bytes())
    tiny.reinstall("tinypkg/beta.py", b"LIMIT = 99  # a rebuild\n")  # another build of it
    before = {rel: tiny.read(rel) for rel in ("tinypkg/alpha.py", "tinypkg/beta.py")}
    r = run_cli("revert-patches", *t, env=cli_env)
    assert r.code != 0, r.out + r.err
    assert "tinypkg/alpha.py, tinypkg/beta.py, tinypkg/gamma.py: pip's own again" in r.err, r.err
    assert f"`harness revert-patches --forget -t venv:{tiny.root} --patches {root}`" in r.err
    assert "Traceback" not in r.err
    r = run_cli("revert-patches", *t, "--forget", env=cli_env)
    assert r.code == 0, r.out + r.err
    assert "forgot 3 file(s) pip installed again (left as pip's)" in r.out, r.out
    assert {rel: tiny.read(rel) for rel in before} == before  # pip's files, untouched
    again = run_cli("revert-patches", *t, env=cli_env)
    assert again.code == 0 and "nothing to revert" in again.out, again.out + again.err


def _stop_all(h: Harness) -> None:
    for run in json.loads(h("runs", "-t", "local", "--json").out):
        if run["label"].startswith("running"):
            h("stop", run["record"]["id"], "-t", "local")


def test_launching_a_step_already_running_warns(tmp_path: Path) -> None:
    h = local_harness(tmp_path, '[steps.slow]\ncommand = ["sleep", "60"]\n')
    try:
        first = h.launch("slow")
        r = h("run", "slow", "-t", "local", "--detach")
        assert r.code == 0, r.err
        assert f"! running  already running here: {first}; this starts another" in r.err, r.err
        assert f"hint: follow it with: harness logs {first} -f" in r.err
        _stop_all(h)
        alone = h("run", "slow", "-t", "local", "--detach")  # none running now: no warning
        assert alone.code == 0 and "already running" not in alone.err, alone.err
    finally:
        _stop_all(h)


def test_patching_under_a_live_run_warns(tmp_path: Path) -> None:
    tiny = make_tiny(tmp_path / "venv")
    root = _series(tmp_path)
    h = local_harness(tmp_path, f'[steps.slow]\ncommand = ["{tiny.python}", "-c", '
                                '"import tinypkg, time; time.sleep(60)"]\n')  # fmt: skip
    t = ["-t", f"venv:{tiny.root}", "--patches", str(root)]
    quiet = h("apply-patches", *t)
    assert quiet.code == 0 and "warning" not in quiet.err, quiet.err
    assert h("revert-patches", *t).code == 0
    try:
        first = h.launch("slow")
        for cmd in ("apply-patches", "revert-patches"):
            r = h(cmd, *t)
            assert r.code == 0, r.out + r.err
            assert f"warning: 1 run(s) live on venv:{tiny.root}: {first}; a running" in r.err
            assert "the change reaches it only when it starts again" in r.err, r.err
    finally:
        _stop_all(h)


def test_apply_then_revert_leaves_the_bytecode_as_pip_did(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    tiny = make_tiny(tmp_path / "venv")
    compileall = [str(tiny.python), "-m", "compileall", "-q", str(tiny.site / "tinypkg")]
    subprocess.run(compileall, check=True)  # pip compiles what it installs; RECORD lists it
    pycache = tiny.site / "tinypkg" / "__pycache__"
    before = {p.name: p.read_bytes() for p in pycache.iterdir()}
    mtime = tiny.path("tinypkg/alpha.py").stat().st_mtime_ns
    assert any(n.startswith("alpha.") for n in before)
    t = ["-t", f"venv:{tiny.root}", "--patches", str(_series(tmp_path))]
    assert run_cli("apply-patches", *t, env=cli_env).code == 0
    assert not any(p.name.startswith("alpha.") for p in pycache.iterdir())  # stale: gone
    r = run_cli("revert-patches", *t, env=cli_env)
    assert r.code == 0, r.out + r.err
    assert {p.name: p.read_bytes() for p in pycache.iterdir()} == before
    assert tiny.path("tinypkg/alpha.py").stat().st_mtime_ns == mtime
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([str(tiny.python), "-c", "import tinypkg.alpha"], env=env, check=True)
    assert {p.name: p.read_bytes() for p in pycache.iterdir()} == before  # taken as valid
