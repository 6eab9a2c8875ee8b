"""Errors that blame the wrong thing (issue 44, items 4-8): each names what the user must fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import local_harness
from tests.support.cli import run_cli

MISSING = (
    '[params]\nvllm_python = "/nonexistent/venv/bin/python"\n'
    '[steps.serve]\npython = "{vllm_python}"\ncommand = ["{python}", "-c", "pass"]\n'
)


def test_a_pipelines_missing_interpreter_is_the_pipelines_not_hosts_toml(tmp_path: Path) -> None:
    """Item 6: a step's ``python = "{vllm_python}"`` that is not on the target: the fix is
    ``--set`` or ``[params]``, not hosts.toml's ``python`` (which names the host's)."""
    h = local_harness(tmp_path, MISSING)
    r = h("run", "serve", "-t", "local", timeout=60)
    assert r.code != 0, r.err
    error = next(x for x in r.err.splitlines() if x.startswith("error: "))
    hint = next(x for x in r.err.splitlines() if x.startswith("hint: "))
    assert error.startswith(f"error: {tmp_path / 'pipeline.toml'}:4: steps.serve.python"), r.err
    assert "'/nonexistent/venv/bin/python' not found" in error
    assert "--set vllm_python=" in hint and "hosts.toml" not in hint, hint


def test_a_missing_interpreter_after_at_names_the_t_option(tmp_path: Path) -> None:
    h = local_harness(tmp_path, MISSING)
    r = h("probe", "vllm", "-t", "local@/nonexistent/python", timeout=60)
    assert r.code != 0
    assert "error: -t local@/nonexistent/python: " in r.err, r.err
    assert "hint: name an interpreter the host has: -t local@/path/to/bin/python" in r.err


PREFIXES = [
    ('["/nonexistent/docker", "exec", "-i", "c"]',
     "the exec prefix's program '/nonexistent/docker' was not found", "fix exec = [...] in "),
    ('["sh", "-c", "exit 3", "x"]',
     "nothing came back through the exec prefix `sh -c 'exit 3' x` (exit 3",
     "try it by hand: sh -c 'exit 3' x "),
    ('["sh", "-c", "exec 0<&-; exec \\"$@\\"", "x"]',
     "passes the command no stdin", "keep stdin open (docker and kubectl exec need -i)"),
    ('["sh", "-c", "exec \\"$@\\" </dev/null", "x"]',
     "passes the command no stdin", "keep stdin open"),
    ('["sleep", "1000"]',
     "the exec prefix `sleep 1000` took the interpreter's options as its own", "fix exec"),
    ('["sh", "-c", "sleep 100", "x"]',
     "through the exec prefix `sh -c 'sleep 100' x`: sh did not finish in 3s",
     "if the prefix hangs, try it by hand: sh -c 'sleep 100' x "),
]  # fmt: skip


@pytest.mark.parametrize(("prefix", "error", "hint"), PREFIXES,
                         ids=["missing", "exits", "closes-stdin", "empty-stdin", "takes-options",
                              "hangs"])  # fmt: skip
@pytest.mark.parametrize("command", [["probe", "packaging", "-t", "box"], ["hosts", "--check"]])
def test_a_broken_exec_prefix_is_named_not_the_interpreter(
    tmp_path: Path, prefix: str, error: str, hint: str, command: list[str]
) -> None:
    """Item 5: a prefix that is missing, exits, closes stdin or hangs was blamed on the
    python interpreter ("set python = ..."), on ``local``, or sent ``hosts --check`` to itself."""
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        f'[hosts.box]\nkind = "exec"\nvia = "local"\nexec = {prefix}\npython = "python3"\n'
        "timeout = 3\n"
    )
    r = run_cli(*command, env={"HARNESS_HOSTS": str(hosts), "HOME": str(tmp_path)}, timeout=60)
    assert r.code != 0, r.out + r.err
    hints = [x for x in r.err.splitlines() if x.startswith("hint: ")]
    assert error in r.err and hints and hint in hints[-1], r.err
    assert "python interpreter" not in r.err and "hosts --check" not in r.err
    assert "error: local" not in r.err


def test_a_step_whose_interpreter_is_missing_is_not_reviewed_with_the_hosts(
    tmp_path: Path,
) -> None:
    """Item 7: the 0.9 pipeline's step with its interpreter missing was reviewed with the
    host's default interpreter against the series there (speculators 0.3.0: 11 patches "not
    applied", call errors) before the one real blocker; now the blocker is the review."""
    h = local_harness(
        tmp_path, MISSING.replace("command =", 'requires = { vllm = ">=0.20" }\ncommand =')
    )
    patches = Path(__file__).resolve().parents[2] / "patches"
    r = h("report", "serve", "-t", "local", "--patches", str(patches), "--format", "json")
    review = json.loads(r.out)
    assert review["patches"] == [] and review["check"] is None, review["patches"]
    first = review["reasons"][0]
    assert first["severity"] == "blocker" and "steps.serve.python" in first["text"], first


SERVED = """\
[params]
model = "meta-llama/Llama-3.1-8B-Instruct"
util_flag = "--gpu-memory-utilization"
connector = "ExampleHiddenStatesConnector"

[steps.serve]
command = [
    "vllm", "serve", "{model}",
    "--kv_transfer_config", '{{"kv_connector": "{connector}", "kv_role": "kv_producer"}}',
    "{util_flag}", "0.8",
]
checks = []
"""


@pytest.mark.parametrize(
    ("given", "said"),
    [("connector=NoSuchConnector", "'NoSuchConnector' is not a KV connector"),
     ("util_flag=--gpu-memory-utilisation", "has no flag --gpu-memory-utilisation")],
)  # fmt: skip
def test_a_bad_value_from_set_is_quoted_from_the_set(
    cli_env: dict[str, str], tmp_path: Path, given: str, said: str
) -> None:
    """Item 8: ``check --step serve --set X=bad`` quoted the file's line (the value the
    --set overrode, or the command's first line), not the --set that wrote the bad value."""
    path = tmp_path / "pipeline.toml"
    path.write_text(SERVED)
    r = run_cli("check", "--step", "serve", "--pipeline", str(path), "-t", "pypi:vllm==0.26.0",
                "--set", given, env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1 and said in r.out, r.out + r.err
    assert f"│ --set {given}" in r.out, r.out


def test_a_connector_module_vllm_itself_lacks_asks_for_another_vllm(
    cli_env: dict[str, str],
) -> None:
    """Item 4: speculators 0.9's serve step on vLLM 0.16.0, which has no example hidden-states
    connector module: the fix is a vLLM the step's ``known_good`` names, not "install the
    package that has vllm into the server's environment"; and ``check --step`` says the
    version is outside ``known_good``."""
    path = Path(__file__).resolve().parents[2] / "pipelines" / "speculators-0.9.toml"
    r = run_cli("check", "--step", "serve", "--pipeline", str(path), "-t", "pypi:vllm==0.16.0",
                env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1, r.out + r.err
    assert "is not part of vllm 0.16.0: the server imports it at start-up" in r.out, r.out
    assert (
        "fix: Use a vllm release that has it: the step is known to work with vllm>=0.22,<=0.26"
        in r.out
    )
    assert "Install the package that has vllm" not in r.out
    said = r.out + r.err
    assert "vllm 0.16.0 is outside the range step serve's environment is known to work in" in said
