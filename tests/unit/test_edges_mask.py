"""Issue 21 item 4: secrets are masked by whole name parts, as whole values, never short ones.

``TOKENIZERS_PARALLELISM = "false"`` in a step's env turned every ``false`` in the printed
command and in ``run.json`` into ``***``, and ``HF_TOKEN = "1"`` turned ``--epochs 10`` into
``--epochs ***0``: the record no longer said what ran. Now only a variable that is a secret by
a whole part of its name counts, its value is looked for only where it stands whole, and a
value under :data:`harness.targets.shell.MIN_SECRET` characters is never looked for (the
variable's own value is still shown as ``***``).
"""

from __future__ import annotations

import pytest

from harness.runs.pipeline.file import parse_pipeline
from harness.runs.pipeline.resolve import resolve_step
from harness.runs.target.remote import masked_record
from harness.targets import shell
from harness.targets.local import LocalTarget

BUILT = {
    "workdir": "/w", "python": "/venv/bin/python", "run_id": "t-1",
    "run_dir": "/w/.harness/runs/t-1", "step": "t", "smoke_dir": "/w/s", "verifiers": "/w/v",
    "shard": "0", "num_shards": "1", "node_rank": "0", "nnodes": "1", "head": "127.0.0.1",
}  # fmt: skip


def record(env: str, command: str) -> tuple[str, dict[str, str], tuple[str, ...]]:
    """The step's display line, and run.json's env and argv as harness writes them."""
    text = f"[steps.t]\ncommand = {command}\nenv = {env}\n"
    resolved = resolve_step(parse_pipeline(text, "p.toml"), "t", BUILT)
    rec = masked_record("t-1", resolved, LocalTarget(), "/w", "p.toml")
    return resolved.display(), dict(rec.env), rec.argv


def test_a_variable_that_only_contains_token_is_no_secret() -> None:
    shown, env, argv = record(
        '{ TOKENIZERS_PARALLELISM = "false" }', '["train", "--shuffle", "false", "--x=false"]'
    )
    assert shown == "train --shuffle false --x=false"
    assert argv == ("train", "--shuffle", "false", "--x=false")
    assert env["TOKENIZERS_PARALLELISM"] == "false"


def test_a_short_secret_is_masked_as_its_own_value_only() -> None:
    shown, env, argv = record('{ HF_TOKEN = "1" }', '["train", "--epochs", "10", "--seed", "1"]')
    assert shown == "train --epochs 10 --seed 1" and argv[1:] == ("--epochs", "10", "--seed", "1")
    assert env["HF_TOKEN"] == "***"


def test_a_real_secret_is_masked_where_it_stands_whole() -> None:
    token = "hf_AbCdEf123456"
    shown, env, argv = record(
        f'{{ HF_TOKEN = "{token}", URL = "https://u:{token}@hub/x" }}',
        f'["dl", "--token={token}", "x{token}", "{token}"]',
    )
    assert shown == f"dl --token=*** x{token} ***"
    assert argv == ("dl", "--token=***", f"x{token}", "***")
    assert env["HF_TOKEN"] == "***" and env["URL"] == "https://u:***@hub/x"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True), ("HUGGING_FACE_HUB_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True),
        ("OPENAI_API_KEY", True), ("DB_PASSWORD", True), ("hfToken", True),
        ("GITHUB_TOKEN2", True), ("SSH_PASSPHRASE", True), ("AZURE_CREDENTIALS", True),
        ("TOKENIZERS_PARALLELISM", False), ("MAX_TOKENS", False), ("KEYBOARD", False),
        ("MONKEY_PATCH", False), ("CUDA_VISIBLE_DEVICES", False), ("PATH", False),
    ],
)  # fmt: skip
def test_secret_names_are_whole_parts(name: str, secret: bool) -> None:
    assert shell.is_secret_name(name) is secret


def test_mask_leaves_short_values_and_glued_ones() -> None:
    assert shell.mask("--epochs 10 --lr 1e-4", ["1"]) == "--epochs 10 --lr 1e-4"
    assert shell.mask("a false b", ["false"]) == "a false b"  # 5 < MIN_SECRET
    assert shell.mask("p=s3cr3tv s3cr3tvx _s3cr3tv", ["s3cr3tv"]) == "p=*** s3cr3tvx _s3cr3tv"
    assert shell.mask("K='s3 cr3t'", ["s3 cr3t"]) == "K=***"
