"""The real speculators 0.3.0 series on the real seed pair (speculators 0.3.0 + vLLM 0.16.0).

A private copy of the seed venv is the "container": reached over the real loopback sshd as
host ``box``, or as ``venv:PATH``. Every ``harness`` is a fresh process. The oracle for
"pristine" is pip's own ``RECORD``, hashed here independently of harness.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.sshd import SshServer
from tests.support.wheels import SEED_REQUIREMENTS, SPECULATORS, SeedVenv, Wheels, make_venv

REPO = Path(__file__).resolve().parents[2]


def _speculators_series() -> Path:
    """The shipped speculators 0.3.0 series alone (patches/ also holds vLLM 0.24.0's, for the
    speculators 0.9 pipeline: tests/integration/test_series_vllm.py)."""
    dest = Path(tempfile.mkdtemp(prefix="harness-series-")) / "patches"
    shutil.copytree(REPO / "patches" / "speculators", dest / "speculators")
    return dest


SPECULATORS_SERIES = _speculators_series()
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
WORKER = "speculators/data_generation/custom_worker.py"
PATCHED = [WORKER, GEN]  # the files the ten patches for vLLM 0.16 touch
PATCH_IDS = [
    "0001-tokenizer-trust-remote-code",
    "0002-scheduler-config-is-encoder-decoder",
    "0003-kv-cache-config-from-groups",
    "0004-scheduler-block-size",
    "0005-two-phase-execute-model",
    "0006-worker-finds-decoder-in-multimodal-wrappers",
    "0007-collective-rpc-unique-reply",
    "0008-no-prefix-caching",
    "0009-synchronous-scheduling",
    "0010-decoder-embed-input-ids",
    "0013-prefill-across-scheduler-steps",
]
#: gated elsewhere: 0011 is for vLLM 0.20+, 0012 for transformers 5, 0014 for vLLM 0.21+ (the seed
#: venv has none of them)
SKIPPED_IDS = [
    "0011-request-without-eos-token-id",
    "0012-pydantic-rebuild-knows-torch",
    "0014-v1-model-runner",
]
SERIES = sorted(PATCH_IDS + SKIPPED_IDS)  # the series' order: by number
FRESH = ["skipped" if p in SKIPPED_IDS else "applies cleanly" for p in SERIES]
DONE = ["skipped" if p in SKIPPED_IDS else "applied" for p in SERIES]
STATE = ".harness-patches"


def record(site: Path) -> dict[str, str]:
    """speculators' RECORD: path -> hex sha256, decoded here (not by harness)."""
    (info,) = site.glob("speculators-0.3.0.dist-info")
    out = {}
    with open(info / "RECORD", newline="") as f:
        for row in csv.reader(f):
            if len(row) == 3 and row[1].startswith("sha256="):
                raw = row[1].removeprefix("sha256=")
                out[row[0]] = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).hex()
    return out


def differing(site: Path) -> list[str]:
    """Installed speculators files whose sha256 is not pip's RECORD hash."""
    return sorted(
        rel
        for rel, want in record(site).items()
        if hashlib.sha256((site / rel).read_bytes()).hexdigest() != want
    )


def manifest(site: Path) -> dict:
    path = site / STATE / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}


def reinstall_speculators(venv: SeedVenv, wheels: Wheels) -> None:
    """What a user does to undo hand edits: pip puts the wheel's files back."""
    subprocess.run(
        [str(venv.python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--force-reinstall", "--no-compile", "--disable-pip-version-check",
         str(wheels[SPECULATORS])],
        check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture(scope="module")
def container(wheels: Wheels, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeedVenv]:
    """One private copy of the seed venv for the module (a copy costs ~6 s)."""
    dest = tmp_path_factory.mktemp("container") / "venv"
    try:
        yield make_venv(dest, [wheels[req] for req in SEED_REQUIREMENTS])
    finally:
        shutil.rmtree(dest, ignore_errors=True)


@pytest.fixture
def pristine(container: SeedVenv, wheels: Wheels) -> SeedVenv:
    """The container as pip left it, even if an earlier test failed half-way."""
    if differing(container.site_packages) or manifest(container.site_packages):
        reinstall_speculators(container, wheels)
        shutil.rmtree(container.site_packages / STATE, ignore_errors=True)
    assert differing(container.site_packages) == []
    return container


@pytest.fixture
def patches_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "patches"
    shutil.copytree(SPECULATORS_SERIES, dest)
    return dest


def cli(env: dict[str, str], *args: str, cwd: Path | None = None) -> CliResult:
    return run_cli(*args, env=env, cwd=cwd)


def states(env: dict[str, str], *args: str) -> list[str]:
    r = cli(env, "patches", "--json", *args)
    assert r.code in (0, 1), r.err
    assert r.out, r.err
    (report,) = json.loads(r.out)
    return [p["state"] for p in report["plan"]["patches"]]


def errors(data: dict) -> list[tuple[str, int, str]]:
    return [
        (f["file"], f["line"], f["category"]) for f in data["findings"] if f["severity"] == "error"
    ]


def file_ids(site: Path, rels: list[str]) -> dict[str, tuple[int, int, str]]:
    out = {}
    for rel in rels:
        st = (site / rel).stat()
        out[rel] = (
            st.st_ino,
            st.st_mtime_ns,
            hashlib.sha256((site / rel).read_bytes()).hexdigest(),
        )
    return out


def test_series_over_ssh_review_apply_again_check_revert(
    pristine: SeedVenv, sshd: SshServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    site = pristine.site_packages
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('default = "box"\n' + sshd.host_entry("box", python=str(pristine.python)))
    # a short-lived mux: the later commands share the first one's connection, as users' do
    env = {**cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": "5"}
    patches = ("--patches", str(SPECULATORS_SERIES))

    assert states(env, *patches) == FRESH

    # review: the per-file diff against the live files, on screen and as Markdown; no writes
    report = tmp_path / "r.md"
    r = cli(env, "apply-patches", "--dry-run", "--report", str(report), *patches)
    assert r.code == 0, r.err
    assert r.out.count("applies cleanly") == len(PATCH_IDS)
    for rel in PATCHED:
        assert f"{rel} (against the live file)" in r.out
        assert f"--- a/{rel}" in r.out and f"+++ b/{rel}" in r.out
    tokenizer = "self.tokenizer = AutoTokenizer.from_pretrained(model_path, trust_remote_code=True)"
    assert f"+        {tokenizer}" in r.out
    md = report.read_text()
    assert md.startswith("# Patch report for `box (")
    assert md.count("```diff") == 2
    assert f"### `{GEN}`" in md and f"### `{WORKER}`" in md
    assert f"+        {tokenizer}" in md
    for pid in PATCH_IDS:
        assert f"| `{pid}` | applies cleanly |" in md
    assert differing(site) == [] and not (site / STATE).exists()

    r = cli(env, "apply-patches", *patches)
    assert r.code == 0, r.err
    assert "applied: 2 file(s) written" in r.out
    assert differing(site) == sorted(PATCHED)
    assert states(env, *patches) == DONE
    assert not list((site / STATE).glob("journal*")) and not (site / STATE / "txn").exists()

    ids = file_ids(site, PATCHED)
    saved = manifest(site)
    r = cli(env, "apply-patches", *patches)
    assert r.code == 0, r.err
    assert "already applied: nothing written" in r.out
    assert file_ids(site, PATCHED) == ids and manifest(site) == saved  # not even a re-write

    # the patched container checks clean with plain `harness check`
    r = cli(env, "check", "speculators", "--against", "vllm", "--json")
    assert r.code == 0, r.out + r.err
    data = json.loads(r.out)
    assert data["callees"] == {"vllm": "0.16.0"} and errors(data) == []

    r = cli(env, "revert-patches", *patches)
    assert r.code == 0, r.err
    assert "restored 2 file(s) byte-identical" in r.out
    assert differing(site) == []  # every file's sha256 is pip's RECORD again
    assert manifest(site) == {} and not (site / STATE / "backups").exists()


def test_series_on_a_venv_target(pristine: SeedVenv, cli_env: dict[str, str]) -> None:
    site = pristine.site_packages
    args = ("-t", f"venv:{pristine.root}", "--patches", str(SPECULATORS_SERIES))
    r = cli(cli_env, "apply-patches", *args)
    assert r.code == 0, r.err
    assert "applied: 2 file(s) written" in r.out
    assert states(cli_env, *args) == DONE
    ids = file_ids(site, PATCHED)
    r = cli(cli_env, "apply-patches", *args)
    assert r.code == 0 and "already applied: nothing written" in r.out
    assert file_ids(site, PATCHED) == ids
    r = cli(cli_env, "revert-patches", *args)
    assert r.code == 0, r.err
    assert differing(site) == []
    r = cli(cli_env, "revert-patches", *args)
    assert r.code == 0 and "nothing to revert" in r.out


def test_check_with_patches_on_the_unpatched_seed(
    seed_venv: SeedVenv, cli_env: dict[str, str]
) -> None:
    """What the series fixes, checked before anything is written (the seed is read-only)."""
    target = ("-t", f"venv:{seed_venv.root}")
    r = cli(cli_env, "check", "speculators", "--against", "vllm", "--json", *target, cwd=REPO)
    assert r.code == 1
    assert len(errors(json.loads(r.out))) == 3  # pinned in test_check_real.py
    r = cli(
        cli_env, "check", "speculators", "--against", "vllm", "--with-patches", "--json", *target,
        cwd=REPO,
    )  # fmt: skip
    assert r.code == 0, r.out + r.err
    data = json.loads(r.out)
    assert errors(data) == [] and not any("does not apply" in n for n in data["notes"])
    assert differing(seed_venv.site_packages) == []


def test_make_patch_round_trip(
    pristine: SeedVenv, wheels: Wheels, cli_env: dict[str, str], patches_copy: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    """Patched container, hand edits while debugging, make-patch, reinstall, apply: same bytes."""
    site = pristine.site_packages
    args = ("-t", f"venv:{pristine.root}", "--patches", str(patches_copy))
    assert cli(cli_env, "apply-patches", *args).code == 0
    series_gen = (site / GEN).read_bytes()
    worker = site / WORKER
    text = worker.read_text()
    assert text.count("def _find_decoder(model):\n") == 1  # from patch 0006
    worker.write_text(
        text.replace("def _find_decoder(model):\n", "def _find_decoder(model):  # tuned\n")
    )
    init = site / "speculators/__init__.py"  # a file no patch touches
    init.write_text(init.read_text() + "# debugging on the box\n")
    edited = {WORKER: worker.read_bytes(), "speculators/__init__.py": init.read_bytes()}
    r = cli(cli_env, "patches", *args)
    for rel in edited:
        assert f"edited by hand {rel}" in r.out

    r = cli(
        cli_env,
        "make-patch",
        "speculators",
        "--name",
        "my-fix",
        "--why",
        "keep the box's fixes",
        "--requires",
        "vllm >=0.16, <0.17",
        *args,
    )
    assert r.code == 0, r.err
    new = patches_copy / "speculators" / "0.3.0" / "0015-my-fix.patch"
    assert new.is_file() and str(new) in r.out.replace("\n", "")
    body = new.read_text()
    assert "+def _find_decoder(model):  # tuned\n" in body and "+# debugging on the box\n" in body
    assert '+    paths = (("model",)' not in body  # based on the series' result, not pristine
    series = (patches_copy / "speculators" / "0.3.0" / "series.toml").read_text()
    assert series.rstrip().endswith(
        '[[patch]]\nfile = "0015-my-fix.patch"\nwhy = "keep the box\'s fixes"\n'
        'requires = { vllm = ">=0.16, <0.17" }'
    )

    # where it was made the patch counts as applied: the box reads as the series through the
    # new patch, and revert-patches restores what pip installed -- the file no patch had
    # touched too (its backup is the wheel's file)
    r = cli(cli_env, "patches", *args)
    assert r.code == 0 and "edited by hand" not in r.out, r.out
    assert states(cli_env, *args) == [*DONE, "applied"]
    r = cli(cli_env, "revert-patches", *args)
    assert r.code == 0, r.err
    assert differing(site) == []

    reinstall_speculators(pristine, wheels)  # undo every edit the way users do
    assert differing(site) == []
    assert states(cli_env, *args) == [*FRESH, "applies cleanly"]
    r = cli(cli_env, "apply-patches", *args)
    assert r.code == 0, r.err
    for rel, data in edited.items():
        assert (site / rel).read_bytes() == data  # identical bytes
    assert (site / GEN).read_bytes() == series_gen
    r = cli(cli_env, "revert-patches", *args)
    assert r.code == 0, r.err
    assert differing(site) == []

    # into an empty patches folder: the first patch of a new series
    empty = tmp_path / "empty"
    original = init.read_bytes()
    init.write_text(init.read_text() + "# again\n")
    wanted = init.read_bytes()
    r = cli(cli_env, "make-patch", "speculators", "--name", "first", "-t", f"venv:{pristine.root}",
            "--patches", str(empty))  # fmt: skip
    assert r.code == 0, r.err
    folder = empty / "speculators" / "0.3.0"
    assert sorted(p.name for p in folder.iterdir()) == ["0001-first.patch", "series.toml"]
    init.write_bytes(original)  # the hand edit undone
    assert differing(site) == []
    r = cli(cli_env, "apply-patches", "-t", f"venv:{pristine.root}", "--patches", str(empty))
    assert r.code == 0, r.err
    assert init.read_bytes() == wanted
    assert os.path.exists(site / STATE / "manifest.json")


def test_series_is_skipped_where_its_requires_do_not_hold(cli_env: dict[str, str]) -> None:
    """On vLLM 0.11.0 every patch is gated off (read from wheels: nothing can be written)."""
    args = ("-t", "pypi:speculators==0.3.0,vllm==0.11.0", "--patches", str(SPECULATORS_SERIES))
    r = cli(cli_env, "patches", "--json", *args)
    assert r.code == 0, r.err
    (report,) = json.loads(r.out)
    assert [(p["id"], p["state"], p["detail"]) for p in report["plan"]["patches"]] == [
        *[(pid, "skipped", "vllm 0.11.0 is not >=0.16,<0.27") for pid in PATCH_IDS[:-1]],
        (SKIPPED_IDS[0], "skipped", "vllm 0.11.0 is not >=0.17,<0.27"),
        (SKIPPED_IDS[1], "skipped", "transformers is not installed (needs >=5)"),
        (PATCH_IDS[-1], "skipped", "vllm 0.11.0 is not >=0.16,<0.27"),
        (SKIPPED_IDS[2], "skipped", "vllm 0.11.0 is not >=0.21,<0.27"),
    ]
    r = cli(cli_env, "apply-patches", *args)
    assert r.code == 0, r.err
    assert "nothing written: no patch of the series applies here (14 skipped)" in r.out
    r = cli(cli_env, "apply-patches", "-t", "pypi:speculators==0.3.0,vllm==0.16.0",
            "--patches", str(SPECULATORS_SERIES))  # fmt: skip
    assert r.code == 2 and "is read-only" in r.err
