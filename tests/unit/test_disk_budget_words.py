"""The disk budget's words and decision (pure): sizes, the refusal with both numbers, the
staging warning; and ``disk = {...}``'s key errors naming file and line."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.runs.pipeline.file import parse_pipeline
from harness.runs.target.disk import Budget, refusal, size


def budget(need: int, free: int, other_fs: bool = False) -> Budget:
    return Budget(samples=1024, tokens=131_072, layers=4, hidden=7168, format="bf16",
                  per_token=57_344, need=need, free=free, out="/data/hs", fs="/data",
                  staging="/scratch/st", staging_other_fs=other_fs)  # fmt: skip


@pytest.mark.parametrize(
    ("n", "words"),
    [(512, "512 B"), (12_800, "12.8 KB"), (6_553_600, "6.6 MB"), (7.5e9, "7.5 GB"),
     (5.7e13, "57.0 TB")],
)  # fmt: skip
def test_sizes_read_as_df_H_does(n: float, words: str) -> None:
    assert size(n) == words


def test_a_step_that_will_not_fit_is_refused_with_both_numbers() -> None:
    got = refusal("generate", budget(7_516_192_768, 2_000_000))
    assert got is not None
    message, hint = got
    assert message == (
        "generate will write 7.5 GB to /data/hs (1,024 samples, 131,072 tokens x 4 layers x "
        "7168 x bf16); 2.0 MB free there: it will not fit (7.5 GB short)"
    )
    assert "--force runs it anyway" in hint
    assert refusal("generate", budget(1_000, 2_000)) is None


def test_staging_on_another_filesystem_is_a_warning_only_then() -> None:
    assert budget(1, 2).warnings() == []
    (warning,) = budget(1, 2, other_fs=True).warnings()
    assert "/scratch/st is on another filesystem than /data/hs" in warning


def test_the_budget_round_trips_through_its_dict() -> None:
    b = budget(10, 20, True)
    assert Budget.from_dict(b.to_dict()) == b


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[steps.g]\ncommand = ["x"]\ndisk = { prepared = "p", layers = "1" }\n', "disk.out"),
        ('[steps.g]\ncommand = ["x"]\ndisk = { out = "o", prepared = "p", layers = "1" }\n',
         "give the hidden size (hidden) or the model"),
        ('[steps.g]\ncommand = ["x"]\ndisk = { out = "o", prepared = "p", layers = "1", '
         'hidden = "8", format = "int4" }\n', "expected one of bf16, fp16, fp32, fp8"),
        ('[steps.g]\ncommand = ["x"]\ndisk = { out = "o", prepared = "p", layers = "1", '
         'hidden = "8", outt = "x" }\n', "did you mean 'out'"),
    ],
)  # fmt: skip
def test_disk_key_errors_name_file_and_line(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_pipeline(text, "p.toml")
    assert err.value.message.startswith("p.toml:3: "), err.value.message
    assert words in err.value.message + (err.value.hint or ""), err.value.message
