"""harness.targets.shell: every argv element arrives as exactly one argument, never as code.

Checked two ways: ``shlex.split`` gives the argv back, and a real ``/bin/sh -c`` (the shell
sshd hands our line to) prints back exactly the bytes we passed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.targets import shell

HOSTILE = [
    "x; touch /tmp/pwned",
    "$(id)",
    "`id`",
    "${HOME}",
    "a\nb",
    "line\r\n",
    "it's",
    '"double"',
    "'",
    "''",
    "\\",
    "a\\nb",
    "",
    " ",
    "\t",
    "*",
    "~",
    "~root",
    "!",
    "#comment",
    "&& echo hi",
    "| cat",
    "> /tmp/x",
    "--flag=1",
    "-n",
    "ünïcødé 日本語 🚀",
    "x=y",
    "%s%n",
]

SHELLS = [s for s in ("/bin/sh", shutil.which("dash"), shutil.which("bash")) if s]


def run_sh(line: str, sh: str = "/bin/sh", cwd: Path | None = None) -> bytes:
    out = subprocess.run([sh, "-c", line], capture_output=True, check=True, cwd=cwd)
    return out.stdout


@pytest.mark.parametrize("arg", HOSTILE)
def test_quote_round_trips_through_shlex(arg: str) -> None:
    assert shlex.split(shell.quote(arg)) == [arg]


def test_join_round_trips_through_shlex() -> None:
    assert shlex.split(shell.join(HOSTILE)) == HOSTILE


@pytest.mark.parametrize("sh", SHELLS)
def test_real_shell_echoes_every_hostile_argument_exactly(sh: str) -> None:
    line = shell.command(["printf", "%s\\0", *HOSTILE])
    printed = run_sh(line, sh).split(b"\0")[:-1]
    assert printed == [a.encode() for a in HOSTILE]


def test_injection_does_not_execute(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = [f"x; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"\ntouch {marker}"]
    line = shell.command(["echo", *evil], env={"V": f"$(touch {marker})"}, cwd=str(tmp_path))
    run_sh(line)
    assert not marker.exists()


def test_env_prefix_and_values_reach_the_program() -> None:
    env = {"B_VAR": "two words", "A_VAR": "$(id) `x` 'q'", "EMPTY": ""}
    line = shell.command(["env"], env=env)
    assert line.startswith("env A_VAR=")  # sorted, reproducible
    out = run_sh(line).decode()
    for key, value in env.items():
        assert f"{key}={value}\n" in out


def test_command_shape() -> None:
    line = shell.command(["prog", "a b"], env={"K": "V"}, cwd="/x y")
    assert line == "cd '/x y' && env K=V prog 'a b'"
    assert shell.command(["prog"], exec_=True) == "exec prog"
    assert shell.env_prefix(None) == shell.env_prefix({}) == ""


def test_cwd_is_entered_and_a_failed_cd_stops_the_command(tmp_path: Path) -> None:
    odd = tmp_path / "dir with 'quote' $(x)"
    odd.mkdir()
    assert run_sh(shell.command(["pwd"], cwd=str(odd))).decode().strip() == str(odd)
    missing = shell.command(["echo", "ran"], cwd=str(tmp_path / "missing"))
    proc = subprocess.run(["/bin/sh", "-c", missing], capture_output=True)
    assert proc.returncode != 0 and b"ran" not in proc.stdout


@pytest.mark.parametrize("name", ["1A", "A-B", "A B", "", "A=B", "é", "A;B", "$A", "A\n"])
def test_invalid_env_names_are_refused(name: str) -> None:
    with pytest.raises(UsageError, match="environment variable name"):
        shell.command(["true"], env={name: "v"})


@pytest.mark.parametrize("name", ["A", "_", "a_b", "HF_TOKEN", "X1"])
def test_valid_env_names(name: str) -> None:
    assert shell.check_env_name(name) == name


@pytest.mark.parametrize(
    "argv",
    [[], "echo hi", ["a\x00b"], ["ok", "nul\x00"]],
)
def test_bad_argv_is_a_usage_error(argv: list[str] | str) -> None:
    with pytest.raises(UsageError):
        shell.command(argv)


def test_program_with_equals_sign_and_env_is_refused() -> None:
    with pytest.raises(UsageError, match="="):
        shell.command(["a=b"], env={"K": "V"})
    assert shell.command(["a=b"]) == "'a=b'"  # fine without env: the shell runs it as a word


@pytest.mark.parametrize("word", ["a=b", "if", "while", "!", "{", "function", "x=$(id)", "done"])
@pytest.mark.parametrize("sh", SHELLS)
def test_program_name_is_never_syntax_or_an_assignment(word: str, sh: str) -> None:
    """``["A=1", "echo", "hi"]`` must try to run a program called ``A=1``, not echo."""
    line = shell.join([word, "echo", "ran"])
    assert shlex.split(line) == [word, "echo", "ran"]
    proc = subprocess.run([sh, "-c", line], capture_output=True)
    assert proc.returncode == 127 and b"ran" not in proc.stdout


def test_bash_time_keyword_is_quoted() -> None:
    assert shell.join(["time", "x"]) == "'time' x"


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("token=hf_abc123 more", ["hf_abc123"], "token=*** more"),
        ("env K='it'\"'\"'s ok' x", ["it's ok"], "env K=*** x"),
        ("a=s3cr3t-long b=s3cr3t", ["s3cr3t", "s3cr3t-long"], "a=*** b=***"),
        ("nothing here", ["", "zzz"], "nothing here"),
        ("twice x1y2z3 x1y2z3", ["x1y2z3"], "twice *** ***"),
        ("short x1 x1", ["x1"], "short x1 x1"),  # under MIN_SECRET: never looked for
    ],
)
def test_mask(text: str, secrets: list[str], expected: str) -> None:
    assert shell.mask(text, secrets) == expected


def test_mask_hides_secret_in_a_built_command() -> None:
    secret = "p@ss w'rd$"
    line = shell.command(["run"], env={"HF_TOKEN": secret, "MODE": "x"})
    masked = shell.mask(line, shell.secrets_in({"HF_TOKEN": secret, "MODE": "x"}))
    assert "p@ss" not in masked and "HF_TOKEN=***" in masked and "MODE=x" in masked


def test_secrets_in_picks_secret_looking_names() -> None:
    env = {
        "HF_TOKEN": "a",
        "AWS_SECRET_ACCESS_KEY": "b",
        "OPENAI_API_KEY": "c",
        "DB_PASSWORD": "d",
        "PATH": "/bin",
        "CUDA_VISIBLE_DEVICES": "0",
        "EMPTY_TOKEN": "",
    }
    assert sorted(shell.secrets_in(env)) == ["a", "b", "c", "d"]


def test_report_pid_gives_the_programs_own_pid_and_is_stripped() -> None:
    line = shell.command(
        ["sh", "-c", "echo $$; echo err >&2"], exec_=True, report_pid=True, cwd="/"
    )
    proc = subprocess.run(["/bin/sh", "-c", line], capture_output=True, check=True)
    pid, stderr = shell.split_pid(proc.stderr)
    assert pid == int(proc.stdout) and pid != os.getpid()
    assert stderr == b"err\n"


def test_split_pid_tolerates_login_noise_and_absence() -> None:
    noisy = b"motd line\n\x1eharness-pid=42\x1e\nreal err\n"
    assert shell.split_pid(noisy) == (42, b"motd line\nreal err\n")
    assert shell.split_pid(b"plain\n") == (None, b"plain\n")
