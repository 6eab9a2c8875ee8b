"""Errors that blame the wrong thing (issue 44, items 4-8): each names what the user must fix."""

from __future__ import annotations

from pathlib import Path

from tests.integration.test_runs_ssh import local_harness

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
