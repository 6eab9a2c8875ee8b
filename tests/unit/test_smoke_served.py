"""The served pipeline's smoke mode, pure (issue 42 item 5): the layer-id map, the smoke plan of
pipelines/speculators-0.9.toml's steps and their server, and that a smoke service and a real
one are never taken for each other."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError, UsageError
from harness.runs.follow.services import live_service
from harness.runs.pipeline import smoke
from harness.runs.pipeline.digest import service_digest
from harness.runs.pipeline.file import load_pipeline, parse_pipeline
from harness.runs.pipeline.resolve import resolve_step
from harness.runs.pipeline.steps import BUILTINS
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import RunInfo, RunRecord
from harness.runs.record.parts import Fingerprint

REPO = Path(__file__).resolve().parents[2]
SERVED = REPO / "pipelines" / "speculators-0.9.toml"

MAP = [
    # (captured ids of the full model, cut to N layers, ids on the cut model)
    ([2, 16, 29, 32], 4, [1, 2, 3, 4]),  # speculators' [2, L//2, L-3] + L of a 32-layer Llama
    ([2, 16, 29, 32], 8, [1, 4, 7, 8]),  # lowest, middle, last-but-some, final = N
    ([2, 16, 29, 32], 32, [2, 16, 29, 32]),  # no cut: unchanged
    ([1, 2, 3, 4], 4, [1, 2, 3, 4]),  # already mapped: itself (the client's and its server's)
    ([2, 30, 58, 61], 4, [1, 2, 3, 4]),  # DeepSeek-V3's 61 layers
    ([2, 12, 21, 24], 6, [1, 3, 5, 6]),
    ([0, 5, 10], 3, [0, 2, 3]),  # the embeddings stay the embeddings
    ([29, 2, 32, 16], 4, [1, 2, 3, 4]),  # any order in, in order out
    ([7], 2, [2]),  # the final layer alone
]


@pytest.mark.parametrize(("ids", "n", "want"), MAP)
def test_layer_ids_map_onto_the_cut_model_with_the_final_layer_last(
    ids: list[int], n: int, want: list[int]
) -> None:
    assert smoke.map_layer_ids(ids, n) == want
    assert smoke.map_layer_ids(want, n) == want  # mapping twice changes nothing


@pytest.mark.parametrize(("ids", "n", "least"), [([2, 16, 29, 32], 3, 4), ([0, 5, 10], 1, 2)])
def test_too_few_layers_for_the_ids_is_one_line_with_the_least_that_fits(
    ids: list[int], n: int, least: int
) -> None:
    with pytest.raises(UsageError, match=r"too few layers") as got:
        smoke.map_layer_ids(ids, n)
    assert got.value.hint == f"give --smoke-layers {least} or more"


def builtins(n: int) -> dict[str, str]:
    out = dict.fromkeys(BUILTINS, "")
    out |= {"workdir": "/w", "python": "/py", "run_dir": "/w/r", "smoke_dir": "/w/r/smoke"}
    return out | {"smoke_layers": str(n)}


def test_the_served_pipelines_smoke_generate_and_its_server() -> None:
    p = load_pipeline(SERVED)
    gen = smoke.plan(p, "generate", None, 3)
    assert gen.layers == 4  # the server's floor: 3 inner ids and the final one
    assert gen.sets == {"hidden_states": "{smoke_dir}/hidden_states", "max_samples": "3",
                        "layer_ids": "1, 2, 3, 4"}  # fmt: skip
    assert gen.hook  # the client's own config reads are cut by the hook
    serve = smoke.plan(p, "serve", gen.layers, overrides=gen.sets)
    assert serve.sets == {"staging": "{smoke_dir}/staging", "layer_ids": "1, 2, 3, 4"}
    assert not serve.hook and serve.env == {}  # vLLM cuts itself: no file written for it
    argv = resolve_step(p, "serve", builtins(4), {**gen.sets, **serve.sets}, smoke=True).argv
    assert argv[-4:] == ("--load-format", "dummy", "--hf-overrides", '{"num_hidden_layers": 4}')
    assert '"eagle_aux_hidden_state_layer_ids": [1, 2, 3, 4]' in " ".join(argv)
    assert '"shared_storage_path": "/w/r/smoke/staging"' in " ".join(argv)
    real = resolve_step(p, "serve", builtins(4), {}).argv
    assert "dummy" not in real and '"eagle_aux_hidden_state_layer_ids": [2, 16, 29, 32]' in (
        " ".join(real)
    )
    verify = resolve_step(p, "generate", builtins(4), gen.sets, smoke=True).verify
    assert "--structure" in verify and verify[verify.index("--layer-ids") + 1] == "1, 2, 3, 4"
    assert verify[verify.index("--max-samples") + 1] == "3"
    prep = smoke.plan(p, "prepare", None, None)
    assert prep.layers == 4 and prep.sets["prepared"] == "{smoke_dir}/prepared"
    # a smoke prepare is checked too (on the H100 it read "succeeded · unverified" without it):
    # the token frequencies of its own folder
    checked = resolve_step(p, "prepare", builtins(4), prep.sets, smoke=True).verify
    assert checked[-2:] == ("--token-freq", "/w/r/smoke/prepared/token_freq.pt"), checked


def test_the_users_own_layer_ids_are_the_ones_mapped() -> None:
    p = load_pipeline(SERVED)
    got = smoke.plan(p, "generate", 6, None, {"layer_ids": "2, 12, 21, 24"})
    assert got.layers == 6 and got.sets["layer_ids"] == "1, 3, 5, 6"


def run(step: str, digest: str, smoke_record: dict | None) -> RunInfo:
    fields = {"id": f"{step}-1", "step": step, "argv": ["x"], "cwd": "/w"}
    record = RunRecord.from_dict({**fields, "service": {"digest": digest}, "smoke": smoke_record})
    info = RunInfo(record=record, supervisor_alive=True)
    assert info.state == RunState.RUNNING
    return info


def test_a_smoke_service_and_a_real_one_are_never_taken_for_each_other() -> None:
    p = load_pipeline(SERVED)
    step = resolve_step(p, "serve", builtins(4), {})
    real, cut = service_digest(step, "r", "/w/r"), service_digest(step, "r", "/w/r", smoke=True)
    assert real != cut
    live_cut = run("serve", cut, {"layers": 4, "samples": None})
    live_real = run("serve", real, None)
    assert live_service([live_cut], "serve", cut, smoke=True) is live_cut
    assert live_service([live_cut], "serve", cut) is None  # a real run: never a smoke service
    assert live_service([live_real], "serve", real, smoke=True) is None
    assert live_service([live_real], "serve", real) is live_real


def test_smoke_args_and_layer_ids_errors_name_the_line() -> None:
    bad = [
        ("smoke = { args = '--load-format dummy' }", r":3: steps\.a\.smoke\.args: expected a list"),
        ("smoke = { args = ['{a b}'] }", r":3: steps\.a\.smoke\.args: bad placeholder"),
        ("smoke = { layer_ids = 4 }", r":3: steps\.a\.smoke\.layer_ids: expected the name"),
    ]
    for line, pattern in bad:
        with pytest.raises(ConfigError, match=pattern):
            parse_pipeline(f"[steps.a]\ncommand = ['x']\n{line}\n", "p.toml")
    p = parse_pipeline(
        "[params]\nids = 'x, y'\nd = '/d'\n[steps.a]\ncommand = ['x', '{d}', '{ids}']\n"
        "smoke = { layer_ids = 'ids', params = { d = '{smoke_dir}' } }\n",
        "p.toml",
    )
    with pytest.raises(UsageError, match=r"p\.toml:2: params\.ids: layer ids 'x, y' are not"):
        smoke.plan(p, "a")


def fp(vllm: str | None, patches: list[str] | None = None) -> dict:
    return {"dists": {"vllm": vllm} if vllm else {}, "patches": {"vllm": patches or []}}


@pytest.mark.parametrize(
    ("then", "now", "said"),
    [
        ({"serve": fp("0.26.0")}, {"serve": fp("0.26.0")}, []),
        (
            {"serve": fp("0.24.0")},
            {"serve": fp("0.26.0")},
            ["service serve: vllm 0.24.0 -> 0.26.0"],
        ),
        (
            {"serve": fp("0.24.0")},
            {"serve": fp("0.24.0", ["0001"])},
            ["service serve: vllm patch 0001 applied since"],
        ),
        (None, {"serve": fp("0.26.0")}, ["its service serve's environment was not recorded then"]),
        ({"serve": fp("0.26.0")}, None, ["its service serve's environment could not be read now"]),
    ],
)
def test_a_served_steps_smoke_run_vouches_for_its_servers_environment_too(
    then: dict | None, now: dict | None, said: list[str]
) -> None:
    own = fp("0.26.0")  # the client's own environment, unchanged
    a = {**own, **({"services": then} if then else {})}
    b = {**own, **({"services": now} if now else {})}
    assert Fingerprint.from_dict(b).changes_since(Fingerprint.from_dict(a)) == said


def test_a_smoke_step_whose_service_has_no_smoke_mode_is_refused_before_anything_starts() -> None:
    p = parse_pipeline(
        "[params]\nd = '/d'\n[steps.serve]\ncommand = ['srv']\nservice = { port = '8000' }\n"
        "[steps.gen]\ncommand = ['x', '{d}']\nneeds = ['serve']\n"
        "smoke = { params = { d = '{smoke_dir}' } }\n",
        "p.toml",
    )
    with pytest.raises(UsageError, match=r"p\.toml:3: steps\.serve: step 'gen' needs the service "
                       r"'serve', which declares no smoke mode") as got:  # fmt: skip
        smoke.plan(p, "gen")
    assert "[steps.serve.smoke]" in (got.value.hint or "")
