"""Issue 21 items 7 and 10: what pipeline.toml refuses at load, with its file:line.

7. A NUL in an env value (or anywhere else) would crash the supervisor at the step's start
   and leave a "lost" run; it is refused when the file is read.
10. A step named ``last`` / ``latest`` would be shadowed by ``harness logs last`` and
   ``harness stop last`` (the newest run of any step).
"""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.runs.pipeline.file import parse_pipeline
from harness.runs.record.state import LATEST_WORDS, match_run

NUL = "\\u0000"  # as TOML spells it


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f'[steps.a]\ncommand = ["x"]\nenv = {{ X = "a{NUL}b" }}\n', "p.toml:3: steps.a.env.X"),
        (
            f'[steps.a]\ncommand = ["x"]\n\n[steps.a.env]\nOK = "1"\nX = "a{NUL}b"\n',
            "p.toml:6: steps.a.env.X",
        ),
        (f'[params]\nm = "a{NUL}"\n[steps.a]\ncommand = ["x", "{{m}}"]\n', "p.toml:2: params.m"),
        (f'[steps.a]\ncommand = ["x",\n  "a{NUL}"]\n', "p.toml:2: steps.a.command"),
        (f'[steps.a]\ncommand = ["x"]\ncwd = "/w{NUL}"\n', "p.toml:3: steps.a.cwd"),
        (f'[steps.a]\nshell = true\ncommand = "echo {NUL}"\n', "p.toml:3: steps.a.command"),
    ],
)
def test_a_nul_anywhere_is_refused_at_load_with_its_line(text: str, where: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    assert err.value.message.startswith(where + ": "), err.value.message
    assert "NUL" in err.value.message and "\n" not in err.value.message
    assert err.value.hint and "remove it" in err.value.hint


def test_a_nul_in_a_key_is_refused_too() -> None:
    text = f'[steps.a]\ncommand = ["x"]\nenv = {{ "X{NUL}" = "1" }}\n'
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    assert err.value.message.startswith("p.toml:3: steps.a.env: "), err.value.message
    assert "NUL" in err.value.message


@pytest.mark.parametrize("word", LATEST_WORDS)
def test_a_step_named_like_the_newest_run_is_refused(word: str) -> None:
    text = f'[steps.ok]\ncommand = ["x"]\n\n[steps.{word}]\ncommand = ["y"]\n'
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    msg = err.value.message
    assert msg.startswith(f"p.toml:4: steps.{word}: step name {word!r} is reserved"), msg
    assert f"harness logs {word}" in msg and err.value.hint == f"rename the step, e.g. {word}_step"


def test_the_reserved_words_are_the_ones_logs_and_stop_read_as_the_newest_run() -> None:
    from harness.runs.record.models import RunInfo

    def run(run_id: str, step: str, at: float) -> RunInfo:
        facts = {"record": {"id": run_id, "step": step, "created_at": at}, "run_dir": "/r"}
        return RunInfo.from_facts(facts, None)

    runs = [run("b-1", "b", 2.0), run("a-1", "a", 1.0)]
    for word in LATEST_WORDS:
        assert match_run(runs, word).id == "b-1"
    assert "lastly" not in LATEST_WORDS
    parse_pipeline('[steps.lastly]\ncommand = ["x"]\n', "p.toml")  # only the whole word
