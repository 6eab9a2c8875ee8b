"""Smoke mode's decisions (pure): what a smoke run sets, what the hook cuts, what changed since."""

from __future__ import annotations

import json

import pytest

from harness.errors import UsageError
from harness.report.model import Review
from harness.runs.pipeline import smoke
from harness.runs.pipeline.file import parse_pipeline
from probes.runs.smoke_hook import cut_config

PIPE = """\
[params]
max_samples = 5000
data = "{workdir}/data"
[steps.extract]
command = ["x", "{data}", "{max_samples}"]
smoke = { samples = "max_samples", layers = 4, params = { data = "{smoke_dir}" } }
[steps.bare]
command = ["x"]
[steps.unsafe]
command = ["x", "{data}"]
smoke = { params = { data = "/tmp/elsewhere" } }
[steps.nolayers]
command = ["x", "{data}"]
smoke = { params = { data = "{smoke_dir}/d" } }
"""


def pipeline():  # type: ignore[no-untyped-def]
    return parse_pipeline(PIPE, "p.toml")


@pytest.mark.parametrize(
    ("step", "layers", "samples", "want_layers", "want_sets"),
    [
        ("extract", None, None, 4, {"data": "{smoke_dir}", "max_samples": "4"}),  # step's floor
        ("extract", 8, 2, 8, {"data": "{smoke_dir}", "max_samples": "2"}),
        ("extract", 2, None, 4, {"data": "{smoke_dir}", "max_samples": "4"}),
        ("nolayers", None, None, 2, {"data": "{smoke_dir}/d"}),  # no sample parameter: none set
        ("nolayers", 1, 7, 1, {"data": "{smoke_dir}/d"}),
    ],
)
def test_plan(
    step: str, layers: int | None, samples: int | None, want_layers: int, want_sets: dict
) -> None:
    plan = smoke.plan(pipeline(), step, layers, samples)
    assert plan.layers == want_layers and dict(plan.sets) == want_sets
    assert json.loads(plan.env["HARNESS_SMOKE"]) == {"layers": want_layers}


@pytest.mark.parametrize(
    ("step", "args", "pattern"),
    [
        ("bare", (), r"p\.toml:\d+: steps\.bare: step 'bare' declares no smoke mode"),
        ("unsafe", (), r"no parameter sends the outputs to \{smoke_dir\}"),
        ("extract", (0, None), r"must be at least 1"),
        ("extract", (None, -3), r"must be at least 1"),
    ],
)
def test_plan_refuses(step: str, args: tuple, pattern: str) -> None:
    with pytest.raises(UsageError, match=pattern):
        smoke.plan(pipeline(), step, *args)


def test_smoke_table_errors_name_the_line() -> None:
    from harness.errors import ConfigError

    bad = [
        ("smoke = { samples = 3 }", r":3: steps\.a\.smoke\.samples: expected the name"),
        ("smoke = { layers = 0 }", r":3: steps\.a\.smoke\.layers: expected a whole number"),
        (
            "smoke = { layer = 2 }",
            r":3: steps\.a\.smoke\.layer: unknown key\nhint: did you mean 'layers'",
        ),
    ]
    for line, pattern in bad:
        with pytest.raises(ConfigError, match=pattern):
            parse_pipeline(f"[steps.a]\ncommand = ['x']\n{line}\n", "p.toml")


CUTS = [
    # (config before, layers, config after, what the log line says)
    ({"num_hidden_layers": 32}, 2, {"num_hidden_layers": 2}, ["num_hidden_layers 32 -> 2"]),
    ({"num_hidden_layers": 2}, 4, {"num_hidden_layers": 2}, []),  # never adds layers
    (
        {"num_hidden_layers": 4, "layer_types": ["sliding", "full", "sliding", "full"],
         "rope": [1, 2]},
        2,
        {"num_hidden_layers": 2, "layer_types": ["sliding", "full"], "rope": [1, 2]},
        ["num_hidden_layers 4 -> 2", "layer_types cut to 2"],
    ),
    (  # DeepSeek-V3 style MoE: 3 dense layers first; keep one MoE layer
        {"num_hidden_layers": 61, "first_k_dense_replace": 3, "n_routed_experts": 256},
        2,
        {"num_hidden_layers": 2, "first_k_dense_replace": 1, "n_routed_experts": 256},
        ["num_hidden_layers 61 -> 2", "first_k_dense_replace 3 -> 1"],
    ),
    (  # multimodal wrapper: the language model's config is nested
        {"architectures": ["X"], "text_config": {"num_hidden_layers": 48}},
        3,
        {"architectures": ["X"], "text_config": {"num_hidden_layers": 3}},
        ["text_config.num_hidden_layers 48 -> 3"],
    ),
    ({"n_layer": 12}, 2, {"n_layer": 2}, ["n_layer 12 -> 2"]),  # GPT-2 naming
    ({"num_hidden_layers": True}, 2, {"num_hidden_layers": True}, []),  # not a count
]  # fmt: skip


@pytest.mark.parametrize(("before", "layers", "after", "said"), CUTS)
def test_cut_config(before: dict, layers: int, after: dict, said: list[str]) -> None:
    cfg = json.loads(json.dumps(before))
    assert cut_config(cfg, layers) == said
    assert cfg == after


def _review(dists: dict, applied: list[str]) -> Review:
    states = [{"id": p, "state": "applied"} for p in applied] + [
        {"id": "9999-x", "state": "skipped"}
    ]
    return Review.from_dict(
        {
            "facts": {"dists": dists},
            "patches": [{"dist": "speculators", "plan": {"patches": states}}],
        }
    )


@pytest.mark.parametrize(
    ("then", "now", "said"),
    [
        (_review({"vllm": "0.20.2"}, ["0001"]), _review({"vllm": "0.20.2"}, ["0001"]), []),
        (
            _review({"vllm": "0.20.1", "torch": None}, ["0001"]),
            _review({"vllm": "0.20.2"}, ["0001", "0002"]),
            ["vllm 0.20.1 -> 0.20.2", "speculators patch 0002 applied since"],
        ),
        (
            _review({"vllm": "0.20.2"}, ["0001", "0010"]),
            _review({"vllm": "0.20.2", "transformers": "5.17.0"}, ["0001"]),
            ["transformers absent -> 5.17.0", "speculators patch 0010 no longer applied"],
        ),
    ],
)
def test_what_changed_since_the_last_green_smoke_run(then: Review, now: Review, said: list) -> None:
    assert smoke.fingerprint(now).changes_since(smoke.fingerprint(then)) == said
