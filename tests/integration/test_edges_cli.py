"""Issue 21: the edges a new user still trips on -- each one clear line, nothing half-changed.

The target is a fresh venv with ``tinypkg`` 1.0 installed the way pip leaves it (see
``test_patches_faults``), reached as ``venv:PATH``; every ``harness`` is a fresh process.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.integration.test_patches_faults import FIXTURES, installed, make_tiny
from tests.support.cli import run_cli


def _series(tmp_path: Path, name: str = "good") -> Path:
    dest = tmp_path / f"patches-{name}"
    shutil.copytree(FIXTURES / name, dest)
    return dest


def test_apply_patches_refuses_an_unwritable_report_before_writing(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Item 1: the report path is checked first; the target is left exactly as it was."""
    tiny = make_tiny(tmp_path / "venv")
    before = installed(tiny.site)
    report = tmp_path / "no-such-folder" / "report.md"
    r = run_cli(
        "apply-patches", "-t", f"venv:{tiny.root}", "--patches", str(_series(tmp_path)),
        "--report", str(report), env=cli_env,
    )  # fmt: skip
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert lines[0] == (
        f"error: --report {report}: its folder {report.parent} does not exist; nothing was done"
    )
    assert lines[1].startswith("hint: ") and len(lines) == 2
    assert installed(tiny.site) == before  # nothing patched
    assert not (tiny.site / ".harness-patches").exists()


def test_apply_patches_prints_applied_then_writes_the_report(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    tiny = make_tiny(tmp_path / "venv")
    report = tmp_path / "report.md"
    r = run_cli(
        "apply-patches", "-t", f"venv:{tiny.root}", "--patches", str(_series(tmp_path)),
        "--report", str(report), env=cli_env,
    )  # fmt: skip
    assert r.code == 0, r.err
    assert "applied: 3 file(s) written" in r.out
    assert "tinypkg" in report.read_text()


def test_report_output_into_a_missing_folder_is_one_line(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "gone" / "review.md"
    r = run_cli("report", "-t", "local", "--format", "md", "-o", str(out), env=cli_env)
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err
    assert f"error: -o {out}: its folder {out.parent} does not exist" in r.err
    assert not out.parent.exists()


def test_make_patch_with_a_300_character_name_is_one_line(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    tiny = make_tiny(tmp_path / "venv")
    (tiny.path("tinypkg/alpha.py")).write_text("# edited by hand\n")
    patches = tmp_path / "patches"
    r = run_cli(
        "make-patch", "tinypkg", "--name", "a" * 300, "-t", f"venv:{tiny.root}",
        "--patches", str(patches), env=cli_env,
    )  # fmt: skip
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err
    assert f"error: --name {'a' * 32!r}...: 300 characters, at most 64" in r.err
    assert "hint: " in r.err
    assert not patches.exists()


def test_two_pins_of_one_dist_in_a_pypi_target_are_refused(cli_env: dict[str, str]) -> None:
    """Item 9: ``pypi:vllm==0.20.2,vllm==0.16.0`` was taken, and the first pin won."""
    r = run_cli("probe", "vllm", "-t", "pypi:vllm==0.20.2,vllm==0.16.0", env=cli_env, timeout=60)
    assert r.code == 2, (r.out, r.err)
    assert "Traceback" not in r.err
    assert r.err.splitlines()[0] == (
        "error: pypi:vllm==0.20.2,vllm==0.16.0: vllm is pinned twice (vllm==0.20.2 and "
        "vllm==0.16.0); a target holds one version of each"
    )
    assert r.err.splitlines()[1].startswith("hint: keep one, e.g. pypi:vllm==0.20.2")


def test_a_requires_on_a_misspelled_dist_warns_with_the_closest_name(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Item 8: ``requires = { vlm = ... }`` skipped the patch silently on every box, exit 0."""
    tiny = make_tiny(tmp_path / "venv")
    patches = _series(tmp_path, "gated")
    toml = patches / "tinypkg" / "1.0" / "series.toml"
    toml.write_text(toml.read_text().replace("requires = { vllm =", "requires = { vlm ="))
    r = run_cli(
        "apply-patches", "-t", f"venv:{tiny.root}", "--patches", str(patches), env=cli_env
    )  # fmt: skip
    assert r.code == 0, r.err
    assert (
        f"warning: {toml}: 0002-alpha-louder requires 'vlm', which is installed nowhere on "
        f"venv:{tiny.root} -- did you mean vllm (not installed here either)? It was skipped."
    ) in r.out
    assert "no dist 'vlm': did you mean vllm" in r.out  # the skipped patch's reason
    assert "applied: 1 file(s) written (1 skipped, 1 of them by a misspelled requires)" in r.out

    # the closest installed name wins, with its version; a correct gate stays quiet
    toml.write_text(toml.read_text().replace("vlm =", "tinypgk ="))
    r = run_cli("patches", "-t", f"venv:{tiny.root}", "--patches", str(patches), env=cli_env)
    assert "requires 'tinypgk', which is installed nowhere" in r.out
    assert "did you mean tinypkg (1.0)?" in r.out
    toml.write_text(toml.read_text().replace("tinypgk =", "vllm ="))
    r = run_cli("patches", "-t", f"venv:{tiny.root}", "--patches", str(patches), env=cli_env)
    assert "warning:" not in r.out and "vllm is not installed" in r.out


def test_hosts_table_breaks_paths_only_after_separators(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Item 14: at 80-100 columns the table broke inside words (``/root/minicon|da3``)."""
    values = {
        "address": "gpu-box-number-one.internal.example.com",
        "python": "/root/miniconda3/envs/eagle3-training-env/bin/python3.12",
        "workdir": "/root/eagle3/experiments/kimi-k2.5-draft",
    }
    short = Path(tempfile.mkdtemp(prefix="hosts-", dir="/tmp"))  # as a user's ~/work/hosts.toml
    hosts = short / "hosts.toml"
    hosts.write_text(
        'default = "gpu"\n[hosts.gpu]\nuser = "root"\nport = 2222\n'
        + "".join(f'{k} = "{v}"\n' for k, v in values.items())
    )
    for columns in (80, 90, 100):
        env = {**cli_env, "HARNESS_HOSTS": str(hosts), "COLUMNS": str(columns)}
        r = run_cli("hosts", env=env)
        assert r.code == 0, r.err
        lines = r.out.splitlines()
        assert all(len(line) <= columns for line in lines), r.out
        rows = [line.split("│")[1:-1] for line in lines if line.startswith("│")]
        start = next(i for i, cells in enumerate(rows) if cells[0].strip() == "gpu (default)")
        end = next(i for i in range(start + 1, len(rows)) if rows[i][0].strip())
        cells = []
        for c in range(5):  # a cell's lines: each break follows a separator, or a space
            text = ""
            for frag in (row[c].strip() for row in rows[start:end]):
                text += ("" if not text or text[-1] in "/.-@:," else " ") + frag
            cells.append(text.strip())
        assert cells[1] == f"root@{values['address']}:2222", (columns, r.out)
        assert cells[2] == values["python"] and cells[3] == values["workdir"], (columns, r.out)
        assert cells[4] == f"{hosts}:2", (columns, r.out)
    shutil.rmtree(short)
