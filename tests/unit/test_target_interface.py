"""Issue 33 part 3: a new target kind writes ``run`` and ``python_argv`` -- what callers
outside ``harness.targets`` use (run a command, run a Python program, stream, identity, env,
workdir) is derived from them or has a default."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence

from harness.probe_runner import run_probe
from harness.targets.base import CommandResult, Target


class Plain(Target):
    """The least a kind writes: a command runner (here: this machine's subprocess)."""

    kind = "plain"
    label = "plain"

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        cp = subprocess.run(list(argv), input=stdin or b"", capture_output=True, check=False)
        return CommandResult(tuple(argv), cp.returncode, cp.stdout, cp.stderr, 0.0)

    def python_argv(self) -> list[str]:
        return [sys.executable]


def test_a_kind_is_run_and_python_argv() -> None:
    assert Target.__abstractmethods__ == frozenset({"run", "python_argv"})


def test_a_kind_with_two_methods_runs_probes() -> None:
    with Plain() as target:
        got = target.run_python("import sys; print(sys.stdin.read()[::-1])", b"olleh")
        assert got.ok and got.stdout.strip() == b"hello"
        env = run_probe(target, "facts", {})  # a real probe, through run_python
        assert env.data["python"]["executable"]
        assert target.identity() == {"kind": "plain", "label": "plain"}
        assert target.run_env == {} and target.default_workdir is None
