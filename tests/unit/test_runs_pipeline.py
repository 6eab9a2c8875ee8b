"""pipeline.toml: parsing, substitution, overrides, and every error with its file:line: key."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.errors import ConfigError, UsageError
from harness.runs.pipeline.file import find_pipeline_file, load_pipeline, parse_pipeline
from harness.runs.pipeline.resolve import parse_sets, resolve_step
from harness.runs.pipeline.steps import BUILTINS, Pipeline, ResolvedStep, Step

REPO = Path(__file__).resolve().parents[2]
BUILT = {
    "workdir": "/w",
    "python": "/venv/bin/python",
    "run_id": "train-1",
    "run_dir": "/w/.harness/runs/train-1",
    "step": "train",
    "smoke_dir": "/w/.harness/runs/train-1/smoke",
    "smoke_layers": "",
    "verifiers": "/w/.harness/runs/train-1/verifiers",
    "shard": "0",
    "num_shards": "1",
    "node_rank": "0",
    "nnodes": "1",
    "head": "127.0.0.1",
}

BASE = """\
[params]
model = "m/Llama"
tp = 1
lr = 1e-4
flag = true
data = "{workdir}/data/{dataset}"
dataset = "sharegpt"

[steps.train]
help = "train it"
command = ["{python}", "train.py", "--model", "{model}", "--tp={tp}", "--lr", "{lr}",
           "--data", "{data}", "--flag", "{flag}", "--braces", "{{literal}}"]
cwd = "{workdir}/repo"
env = { HF_TOKEN = "s3cret", OUT = "{data}/out" }
params = { tp = 2 }

[steps.sh]
shell = true
command = "echo {model} | tee {workdir}/x.txt"
"""


def resolve(text: str = BASE, step: str = "train", **kw: object) -> ResolvedStep:
    return resolve_step(parse_pipeline(text, "p.toml"), step, BUILT, **kw)  # type: ignore[arg-type]


def test_substitution_defaults_step_params_and_builtins() -> None:
    r = resolve()
    assert r.argv == (
        "/venv/bin/python", "train.py", "--model", "m/Llama", "--tp=2", "--lr", "0.0001",
        "--data", "/w/data/sharegpt", "--flag", "true", "--braces", "{literal}",
    )  # fmt: skip
    assert r.cwd == "/w/repo"
    assert r.env == {"HF_TOKEN": "s3cret", "OUT": "/w/data/sharegpt/out"}
    assert r.params["tp"] == "2" and "workdir" not in r.params


@pytest.mark.parametrize(
    ("sets", "extra", "want_in_argv"),
    [
        ({"tp": "8"}, (), "--tp=8"),
        ({"dataset": "ultrachat"}, (), "/w/data/ultrachat"),  # dependants follow the override
        ({"data": "{workdir}/elsewhere"}, (), "/w/elsewhere"),  # overrides may use params too
        ({}, ("--epochs", "3"), "--epochs"),
    ],
)
def test_overrides_and_extra_args(
    sets: dict[str, str], extra: tuple[str, ...], want_in_argv: str
) -> None:
    r = resolve(sets=sets, extra=extra)
    assert want_in_argv in r.argv
    if extra:
        assert r.argv[-len(extra) :] == extra


def test_shell_step_quotes_values_and_extra_args() -> None:
    r = resolve(step="sh", sets={"model": "a b; rm -rf ~"}, extra=["x y"])
    assert r.argv[:2] == ("/bin/sh", "-c")
    assert shlex.split(r.argv[2]) == ["echo", "a b; rm -rf ~", "|", "tee", "/w/x.txt", "x y"]


def test_host_env_is_the_base_and_step_env_wins() -> None:
    r = resolve(base_env={"HF_TOKEN": "host", "HF_HOME": "/data/hf"})
    assert r.env["HF_TOKEN"] == "s3cret" and r.env["HF_HOME"] == "/data/hf"


def test_display_masks_secret_env_values_everywhere() -> None:
    text = BASE.replace('"--braces", "{{literal}}"', '"--token", "s3cret"')
    r = resolve(text)
    assert "s3cret" not in r.display() and "***" in r.display()
    assert r.secrets() == ["s3cret"]


# -- errors: each names file:line: key -------------------------------------------------------

A = "[steps.a]\ncommand = ['x']\n"
ERRORS = [
    # (file text, expected "line: key: problem" fragment)
    ("[steps.a]\ncommand = ['x']\nfoo = 1\n", r"p\.toml:3: steps\.a\.foo: unknown key"),
    ("[steps.a]\ncommnd = ['x']\n", r":2: steps\.a\.commnd: unknown key"),
    ("[params]\nx = 1\n[step.a]\n", r":3: step: unknown key"),
    ("[steps.a]\ncwd = '/'\n", r":1: steps\.a\.command: required key missing"),
    ("[steps.a]\ncommand = 'echo hi'\n", r":2: steps\.a\.command: expected a non-empty list"),
    ("[steps.a]\ncommand = []\n", r":2: steps\.a\.command: expected a non-empty list"),
    ("[steps.a]\nshell = true\ncommand = ['x']\n", r":3: steps\.a\.command: with shell = true"),
    ("[steps.a]\nshell = 'yes'\ncommand = ['x']\n", r":2: steps\.a\.shell: expected true"),
    ("[steps.a]\ncommand = ['x', {k = 1}]\n", r":2: steps\.a\.command: expected a string or num"),
    ("[params]\nworkdir = '/x'\n[steps.a]\ncommand = ['x']\n", r":2: params\.workdir: 'workdir'"),
    ("[params]\n'bad name' = 1\n[steps.a]\ncommand = ['x']\n", r":2: params\.bad name: param"),
    ("[steps.a]\ncommand = ['{a b}']\n", r":2: steps\.a\.command: bad placeholder"),
    ("[steps.a]\ncommand = ['x']\nenv = { 'A-B' = '1' }\n", r":3: steps\.a\.env\.A-B: not a valid"),
    ("[steps.'a b']\ncommand = ['x']\n", r":1: steps\.a b: step name"),
    ("[params]\n", r":1: steps: no steps defined"),
    (A + "requires = { torch = 'new' }\n", r":3: steps\.a\.requires\.torch: 'new' is not a"),
    (A + "requires = { torch = 2 }\n", r":3: steps\.a\.requires\.torch: expected a version"),
    (A + "requires = 'torch>=2'\n", r":3: steps\.a\.requires: expected a table"),
    (A + "checks = 'speculators'\n", r":3: steps\.a\.checks: expected a list of caller"),
    (A + "checks = { speculators = [] }\n", r":3: steps\.a\.checks\.speculators: expected a non"),
    ("[steps.a]\ncommand = ['x'\n", r"p\.toml:\d+: invalid TOML"),
]


@pytest.mark.parametrize(("text", "pattern"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_parse_errors_name_file_line_and_key(text: str, pattern: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_pipeline(text, "p.toml")
    assert re.search(pattern, info.value.message), info.value.message


RESOLVE_ERRORS = [
    # (file text, step, sets, error type, message pattern)
    (
        "[params]\nm = 1\n\n[steps.a]\ncommand = ['x', '{modle}']\n",
        "a", {}, ConfigError, r"p\.toml:5: steps\.a\.command: missing parameter \{modle\}",
    ),
    (
        "[params]\nx = '{y}'\ny = '{x}'\n[steps.a]\ncommand = ['{x}']\n",
        "a", {}, ConfigError, r"p\.toml:2: params\.x: parameters refer to each other: x -> y -> x",
    ),
    (
        "[params]\nx = '{nope}'\n[steps.a]\ncommand = ['{x}']\n",
        "a", {}, ConfigError, r"p\.toml:2: params\.x: missing parameter \{nope\}",
    ),
    (
        "[steps.a]\ncommand = ['x']\ncwd = '{where}'\n",
        "a", {}, ConfigError, r"p\.toml:3: steps\.a\.cwd: missing parameter \{where\}",
    ),
    (
        "[params]\ntp = 1\n[steps.a]\ncommand = ['{tp}']\n",
        "a", {"pt": "2"}, UsageError, r"--set pt=\.\.\.: step 'a' has no parameter 'pt'",
    ),
    (
        "[params]\ntp = 1\n[steps.a]\ncommand = ['{tp}']\n",
        "a", {"tp": "{zz}"}, UsageError, r"--set tp=\.\.\.: unknown parameter \{zz\}",
    ),
    ("[steps.a]\ncommand = ['x']\n", "b", {}, UsageError, r"no step 'b' in p\.toml"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "step", "sets", "kind", "pattern"),
    RESOLVE_ERRORS,
    ids=[e[4][:40] for e in RESOLVE_ERRORS],
)
def test_resolve_errors(
    text: str, step: str, sets: dict[str, str], kind: type[Exception], pattern: str
) -> None:
    with pytest.raises(kind) as info:
        resolve(text, step=step, sets=sets)
    assert re.search(pattern, str(info.value)), str(info.value)


def test_unknown_set_suggests_close_name() -> None:
    with pytest.raises(UsageError) as info:
        resolve(sets={"modl": "x"})
    assert "did you mean 'model'" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("items", "want"),
    [
        (["tp=8"], {"tp": "8"}),
        (["a=b=c", "a=d"], {"a": "d"}),
        (["x="], {"x": ""}),
    ],
)
def test_parse_sets(items: list[str], want: dict[str, str]) -> None:
    assert parse_sets(items) == want


@pytest.mark.parametrize("bad", ["tp", "=8", "t p=1"])
def test_parse_sets_refuses(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_sets([bad])


def test_models_round_trip() -> None:
    p = parse_pipeline(BASE, "p.toml")
    assert Pipeline.from_dict(p.to_dict()) == p
    r = resolve()
    assert ResolvedStep.from_dict(r.to_dict()) == r
    s = p.steps["sh"]
    assert Step.from_dict(s.to_dict()) == s


# -- the shipped pipeline --------------------------------------------------------------------


def test_shipped_pipeline_uses_speculators_scripts_with_real_options() -> None:
    p = load_pipeline(REPO / "pipeline.toml")
    assert list(p.steps) == ["prepare", "extract", "text-view", "vocab", "train"]
    extract = resolve_step(p, "extract", BUILT | {"step": "extract"}, {"tp": "8"})
    argv = list(extract.argv)
    assert argv[1] == "/w/speculators/scripts/data_generation_offline.py"
    assert argv[argv.index("--tensor-parallel-size") + 1] == "8"
    # every option exists in speculators 0.3.0's argparse (scripts/data_generation_offline.py)
    options = {a for a in argv if a.startswith("--")}
    assert options <= {
        "--target-model-path", "--tensor-parallel-size", "--gpu-memory-utilization",
        "--train-data-path", "--seq-length", "--max-samples", "--token-freq-path",
        "--hf-cache-dir", "--assistant-pattern", "--turn-dropout", "--output-dir",
        "--layer-ids", "--batch-size", "--seed", "--start-idx", "--num-preprocessing-workers",
    }  # fmt: skip
    vocab = resolve_step(p, "vocab", BUILT | {"step": "vocab"})
    assert "/w/data/sharegpt/token_freq.pt" in vocab.argv
    train = resolve_step(p, "train", BUILT, {"gpus": "8"})
    assert train.argv[1:5] == ("-m", "torch.distributed.run", "--standalone", "--nproc_per_node=8")
    assert "/w/data/sharegpt/vocab/d2t.npy" in train.argv


@pytest.mark.parametrize(
    ("sets", "reads"),
    [
        ({}, "meta-llama/Llama-3.1-8B-Instruct"),  # a plain model: vocab and train read it
        ({"model": "/m/kimi", "verifier": "{text_view}"}, "/w/text-view"),  # a wrapper: its view
    ],
)
def test_vocab_and_train_read_the_verifier_param(sets: dict[str, str], reads: str) -> None:
    p = load_pipeline(REPO / "pipeline.toml")
    vocab = resolve_step(p, "vocab", BUILT | {"step": "vocab"}, sets)
    assert vocab.argv[vocab.argv.index("--target-model-path") + 1] == reads
    assert vocab.verify[vocab.verify.index("--verifier") + 1] == reads
    train = resolve_step(p, "train", BUILT | {"step": "train"}, sets)
    assert train.argv[train.argv.index("--verifier-name-or-path") + 1] == reads


def test_text_view_step_writes_where_verifier_can_point() -> None:
    p = load_pipeline(REPO / "pipeline.toml")
    view = resolve_step(p, "text-view", BUILT | {"step": "text-view"}, {"model": "/m/kimi"})
    assert view.argv[2:] == ("make", "--model", "/m/kimi", "--out", "/w/text-view")
    assert view.verify[2:] == ("check", "--model", "/m/kimi", "--out", "/w/text-view")
    # checked with training's transformers (train_pythonpath), as train will read it
    tf4 = resolve_step(p, "text-view", BUILT | {"step": "text-view"}, {"train_pythonpath": "/t4"})
    assert tf4.env["PYTHONPATH"] == "/t4"
    prepare = resolve_step(p, "prepare", BUILT | {"step": "prepare"})
    compile(prepare.argv[2], "<prepare>", "exec")  # the inline program is valid Python
    assert prepare.argv[3:] == (
        "meta-llama/Llama-3.1-8B-Instruct", "sharegpt", "2048", "8", "0", "5000",
        "/w/data/sharegpt/token_freq.pt", "/w/data/sharegpt/prepared",
    )  # fmt: skip
    # extract's check reads what prepare saved there, and compares every sample by default
    check = resolve_step(p, "extract", BUILT | {"step": "extract"}).verify
    assert check[check.index("--prepared") + 1] == "/w/data/sharegpt/prepared"
    assert check[check.index("--samples") + 1] == "0"


def test_find_pipeline_file(tmp_path: Path) -> None:
    (tmp_path / "pipeline.toml").write_text("[steps.a]\ncommand=['x']\n")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert find_pipeline_file(None, env={}, cwd=sub) == tmp_path / "pipeline.toml"
    other = tmp_path / "other.toml"
    other.write_text("")
    assert find_pipeline_file(None, env={"HARNESS_PIPELINE": str(other)}, cwd=sub) == other
    with pytest.raises(ConfigError, match="not found"):
        find_pipeline_file(tmp_path / "missing.toml", env={}, cwd=sub)


def test_requires_and_checks_parse_to_what_the_review_needs() -> None:
    p = parse_pipeline(
        "[steps.a]\ncommand = ['x']\nrequires = { Transformers = '>=4.56,<5' }\n"
        "checks = { speculators = ['vllm'] }\n"
        "[steps.b]\ncommand = ['x']\nchecks = ['speculators']\n"
        "[steps.c]\ncommand = ['x']\nchecks = []\n[steps.d]\ncommand = ['x']\n",
        "p.toml",
    )
    a, b, c, d = (p.steps[n] for n in "abcd")
    assert a.requires == {"transformers": ">=4.56,<5"}  # the dist's canonical name
    assert a.checks == {"speculators": ("vllm",)}
    assert b.checks == {"speculators": ()}  # every callee speculators imports
    assert c.checks == {}  # declared: nothing to check (facts and GPU holders only)
    assert d.checks is None and d.requires == {}  # undeclared: the review checks every series
    assert Pipeline.from_dict(p.to_dict()) == p


def test_an_env_value_left_empty_leaves_the_hosts_variable_alone() -> None:
    text = (
        "[params]\nextra = ''\n[steps.a]\ncommand = ['x']\n"
        "env = { PYTHONPATH = '{extra}', KEEP = 'yes' }\n"
    )
    p = parse_pipeline(text, "p.toml")
    host = {"PYTHONPATH": "/host/lib"}
    kept = resolve_step(p, "a", BUILT, base_env=host).env
    assert kept == {"PYTHONPATH": "/host/lib", "KEEP": "yes"}
    got = resolve_step(p, "a", BUILT, {"extra": "/tf4"}, base_env=host).env
    assert got == {"PYTHONPATH": "/tf4", "KEEP": "yes"}


def test_shipped_steps_declare_what_they_need() -> None:
    p = load_pipeline(REPO / "pipeline.toml")
    extract = resolve_step(p, "extract", BUILT | {"step": "extract"})
    assert extract.env["VLLM_WORKER_MULTIPROC_METHOD"] == "spawn"
    assert p.steps["extract"].checks == {"speculators": ("vllm",)}
    train = p.steps["train"]
    assert train.requires == {"transformers": ">=4.56,<5"} and train.checks == {}
    env = resolve_step(p, "train", BUILT, {"train_pythonpath": "/root/tf4"}).env
    assert env["PYTHONPATH"] == "/root/tf4"
    assert "PYTHONPATH" not in resolve_step(p, "train", BUILT).env


def test_builtins_are_the_documented_ones() -> None:
    assert set(BUILTINS) == set(BUILT)
