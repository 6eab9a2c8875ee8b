"""``check --step``: a step's ``vllm serve`` flags and JSON keys against what vLLM accepts.

Pure decisions by tables: where the server is in a step's words, how each argument is read
(vLLM's parser's own spellings: underscores, ``=``, ``--config.key``, ``-O3``, ``--no-x``), and
what the ``serve`` rule says of it. The end-to-end reads (the probe on real vLLM releases) are
in ``tests/integration/test_serve_check.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.checker import Checker
from harness.analysis.findings import Category, CheckReport, Finding, Severity
from harness.analysis.scan import CallerInfo, Scan
from harness.analysis.serve import (
    ConfigFields,
    ServeFacts,
    ServeVocab,
    find_serve,
    flag_name,
    probe_args,
)
from harness.analysis.uses import Site
from harness.errors import ConfigError
from harness.models import GpuInfo, TargetFacts
from harness.report.model import BLOCKER, INFO, WARNING, Gate, Reason, judge
from harness.runs.pipeline.file import parse_pipeline
from harness.runs.pipeline.requires import Need
from harness.runs.target.describe import StepPlan
from harness.runs.target.step_check import Locator, serve_call, words_of
from probes.signatures import serveargs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "serve"


def _at(index: int, _text: str) -> Site:
    return Site("pipeline.toml", index)


FLAGS = (
    "-h --help --model --port --enforce-eager --enable-prefix-caching --tensor-parallel-size "
    "-tp --optimization-level --speculative-config --kv-transfer-config --max-model-len "
    "--max-num-seqs --compilation-config --seed"
)
VOCAB = ServeVocab(
    "vllm",
    "0.26.0",
    flags=frozenset(FLAGS.split()),
    negatable=frozenset({"--enforce-eager", "--enable-prefix-caching", "--help"}),
    configs={
        "--speculative-config": ConfigFields(
            "vllm.config:SpeculativeConfig",
            frozenset({"method", "num_speculative_tokens", "draft_model_config"}),
            file="vllm/config/speculative.py",
            line=82,
        ),
        "--kv-transfer-config": ConfigFields(
            "vllm.config:KVTransferConfig", frozenset({"kv_connector", "kv_role"}), open=True
        ),
    },
)


@pytest.mark.parametrize(
    ("argv", "form", "program"),
    [
        (["vllm", "serve", "m"], "vllm serve", "vllm"),
        (["/opt/vllm/bin/vllm", "serve", "m", "--port", "1"], "vllm serve", "/opt/vllm/bin/vllm"),
        (["env", "A=1", "vllm", "serve"], "vllm serve", "vllm"),
        (["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"],
         "python -m vllm.entrypoints.openai.api_server", "python3"),
        (["/v/bin/python", "-m", "vllm.entrypoints.cli.main", "serve", "m"], "vllm serve",
         "/v/bin/python"),  # speculators 0.9.0's launch_vllm.py execs this
        (["vllm", "bench", "serve"], None, None),
        (["python", "-m", "vllm.entrypoints.cli.main", "bench"], None, None),
        (["python", "serve.py", "vllm"], None, None),
        ([], None, None),
    ],
)  # fmt: skip
def test_the_server_is_found_in_a_steps_words(
    argv: list[str], form: str | None, program: str | None
) -> None:
    call = find_serve(argv, _at)
    assert (call and call.form, call and call.program) == (form, program)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (("/bin/sh", "-c", "cd /w && vllm serve m --port 8 ; echo done"),
         ["cd", "/w", "&&", "vllm", "serve", "m", "--port", "8", ";", "echo", "done"]),
        (("/bin/sh", "-c", "vllm serve 'unclosed"), []),
        (("vllm", "serve", "m"), ["vllm", "serve", "m"]),
    ],
)  # fmt: skip
def test_a_shell_steps_text_is_read_as_words(argv: tuple[str, ...], words: list[str]) -> None:
    assert words_of(argv)[0] == words


def test_a_shell_step_checks_only_the_servers_own_words() -> None:
    words, _ = words_of(("/bin/sh", "-c", "vllm serve m --port 8 && other --nope"))
    call = find_serve(words, _at)
    assert call is not None and [f.name for f in call.flags] == ["--port"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("--speculative_config", "--speculative-config"),
        ("--kv_transfer_config={}", "--kv-transfer-config"),
        ("--compilation_config.cudagraph_mode", "--compilation-config"),
        ("-tp", "-tp"),
    ],
)
def test_a_flag_is_named_as_vllms_parser_names_it(text: str, name: str) -> None:
    assert flag_name(text) == name


def _findings(argv: list[str], vocab: ServeVocab = VOCAB) -> list[tuple[str, str, int]]:
    call = find_serve(argv, _at)
    assert call is not None
    scan = Scan(CallerInfo("step serve", None), {})
    got = Checker(scan, {"vllm": "0.26.0"}, serve=ServeFacts(call, vocab)).run()
    assert {f.category for f in got} <= {Category.SERVE_ARGUMENT}
    return [(f.severity.value, f.keywords[0], f.line) for f in got]


SPEC = '{"method": "extract_hidden_states", "num_speculative_tokens": 1}'

#: argv after ``vllm serve m`` -> (severity, flag or key, token index) of each finding
CASES = [
    # what vLLM's parser takes is not a finding
    (["--port", "8000", "--enforce-eager", "-tp", "2", "--max_model_len=4096"], []),
    (["--no-enable-prefix-caching", "-O3", "-O", "3", "--seed", "-1", "--help"], []),
    (["--speculative_config", SPEC, "--kv-transfer-config", '{"anything": 1}'], []),
    (["--compilation-config.mode", "3", "--", "--not-read"], []),
    # a flag the parser does not define
    (["--gpu-memory-utilisation", "0.9"], [("error", "--gpu-memory-utilisation", 3)]),
    (["--port", "1", "--disable-log-requests"], [("error", "--disable-log-requests", 5)]),
    (["-x"], [("error", "-x", 3)]),
    # a --no- form exists for a bool field only (vLLM's BooleanOptionalAction)
    (["--no-max-model-len", "--no-enforce-eager"], [("error", "--no-max-model-len", 3)]),
    # a prefix argparse completes while it is unique: a warning; an ambiguous one: an error
    (["--enforce", "--port", "1"], [("warning", "--enforce", 3)]),
    (["--max", "1"], [("error", "--max", 3)]),
    # a key that is no field of the config dataclass (whichever spelling passes it)
    (["--speculative-config", '{"method": "x", "num_speculative_token": 1}'],
     [("error", "num_speculative_token", 4)]),
    (["--speculative-config={\"methd\": \"x\"}"], [("error", "methd", 3)]),
    (["--speculative-config.methd", "x"], [("error", "methd", 3)]),
    # a value that is no JSON object
    (["--speculative-config", "{method: x}"], [("error", "--speculative-config", 3)]),
    (["--speculative-config", "[1]"], [("error", "--speculative-config", 3)]),
    # a shell variable is not ours to read
    (["--speculative-config", "$SPEC", "--port", "$PORT"], []),
]  # fmt: skip


@pytest.mark.parametrize(("args", "want"), CASES)
def test_what_the_serve_rule_says(args: list[str], want: list[tuple[str, str, int]]) -> None:
    assert _findings(["vllm", "serve", "m", *args]) == want


def test_an_error_names_the_version_and_the_nearest_valid_name() -> None:
    call = find_serve(["vllm", "serve", "--gpu_memory_utilisation", "1"], _at)
    vocab = ServeVocab("vllm", "0.26.0", flags=frozenset({"--gpu-memory-utilization"}))
    scan = Scan(CallerInfo("step serve", None), {})
    assert call is not None
    (f,) = Checker(scan, {}, serve=ServeFacts(call, vocab)).run()
    assert f.severity == Severity.ERROR
    assert f.message.startswith("vllm 0.26.0's vllm serve has no flag --gpu_memory_utilisation")
    assert f.fix == "Did you mean --gpu-memory-utilization?"


def test_a_renamed_key_points_at_the_dataclass() -> None:
    call = find_serve(["vllm", "serve", "--speculative-config", '{"metod": 1}'], _at)
    assert call is not None
    scan = Scan(CallerInfo("step serve", None), {})
    (f,) = Checker(scan, {}, serve=ServeFacts(call, VOCAB)).run()
    assert f.fix == "Did you mean 'method'?"
    assert (f.callee_file, f.callee_line) == ("vllm/config/speculative.py", 82)
    assert "'metod' is not a field of SpeculativeConfig in vllm 0.26.0" in f.message


PIPELINE = """\
[params]
spec = '{"method": "eagle3", "num_speculative_tokenz": 1}'

[steps.serve]
command = [
    "vllm", "serve", "m",
    "--port", "8000",
    "--max-num-seq", "8",
    "--speculative-config", "{spec}",
]
"""


def test_findings_point_at_the_pipeline_line_that_writes_them() -> None:
    """A flag at its own line of the command; a key where it is written (a parameter)."""
    spec = '{"method": "eagle3", "num_speculative_tokenz": 1}'
    argv = ("vllm", "serve", "m", "--port", "8000", "--max-num-seq", "8",
            "--speculative-config", spec)  # fmt: skip
    plan = StepPlan("serve", command=argv, pipeline="p/pipeline.toml")
    call = serve_call(plan, PIPELINE)
    assert call is not None
    scan = Scan(CallerInfo("step serve", None), {})
    got = Checker(scan, {}, serve=ServeFacts(call, VOCAB)).run()
    assert [(f.file, f.line, f.keywords[0], f.source) for f in got] == [
        ("p/pipeline.toml", 2, "num_speculative_tokenz", PIPELINE.splitlines()[1]),
        ("p/pipeline.toml", 8, "--max-num-seq", '"--max-num-seq", "8",'),
    ]


def test_the_locator_falls_back_to_the_command() -> None:
    locate = Locator("pipeline.toml", PIPELINE, "serve")
    assert locate(0, "--nowhere").line == 5


def test_the_vocabulary_read_from_a_vllm_shaped_source() -> None:
    """Fields become ``--field-name`` (inherited ones too), literal options count as written,
    the config dataclasses give their fields."""
    raw = serveargs.run({**probe_args(), "paths": [str(FIXTURE)]}, print)
    vocab = ServeVocab.from_dict(raw)
    assert vocab.label == "vllm 0.99.0"
    assert {"--enable-log-requests", "--chat-template", "--headless", "-asc"} <= vocab.flags
    assert vocab.accepts("--no-enable-prefix-caching") and vocab.accepts("-O2")
    assert not vocab.accepts("--prefix-caching")
    assert not vocab.accepts("--no-port")  # port: int -- no --no- form
    assert vocab.configs["--kv-transfer-config"].fields == {
        "kv_connector", "kv_role", "kv_connector_extra_config"
    }  # fmt: skip
    assert vocab.unread == ("vllm.entrypoints.cli.serve",)


# -- the review: the serve check gates; the known range is said in one line -----------------

FACTS = TargetFacts("box", {}, (), {}, (GpuInfo(0, "H200", 143771, 0, 143771),), None)


def _serve_report(*findings: Finding, notes: tuple[str, ...] = ()) -> CheckReport:
    return CheckReport("box", "step serve", None, {"vllm": "0.26.0"}, {}, findings, notes=notes)


def _serve_finding(severity: str) -> Finding:
    return Finding(severity, Category.SERVE_ARGUMENT, "pipeline.toml", 9, '"--x",',
                   "vllm serve --x", "no flag --x", "Did you mean --y?")  # fmt: skip


@pytest.mark.parametrize(
    ("serve", "want"),
    [
        (None, []),
        (_serve_report(), []),
        (_serve_report(_serve_finding("error")),
         [Reason(BLOCKER, "pipeline.toml:9: no flag --x", "Did you mean --y?")]),
        (_serve_report(_serve_finding("warning")),
         [Reason(WARNING, "pipeline.toml:9: no flag --x", "Did you mean --y?")]),
        (_serve_report(notes=("not checked: vllm is not installed",)),
         [Reason(WARNING, "not checked: vllm is not installed")]),
    ],
)  # fmt: skip
def test_the_review_gates_on_the_serve_check(serve: CheckReport | None, want: list[Reason]) -> None:
    assert judge(FACTS, (), (), None, None, None, serve) == want


@pytest.mark.parametrize(
    ("found", "severity", "words"),
    [
        ("0.26.0", INFO, "step serve: vllm 0.26.0, in the range"),
        ("0.21.0", WARNING, "step serve: vllm 0.21.0, outside the range"),
        (None, WARNING, "step serve: vllm: not installed, outside the range"),
    ],
)
def test_the_review_says_whether_the_step_is_in_its_known_range(
    found: str | None, severity: Gate, words: str
) -> None:
    at = "pipeline.toml:12: steps.serve.known_good"
    step = StepPlan("serve", ("vllm", "serve"), known_good=(Need("vllm", ">=0.22", found),),
                    known_good_at=at)  # fmt: skip
    (reason,) = judge(FACTS, (), (), None, None, step)
    assert reason.severity == severity and reason.text.startswith(words)
    assert reason.text.endswith(f"known to work in (vllm>=0.22, {at})")
    assert StepPlan.from_dict(step.to_dict()) == step


def test_known_good_is_read_like_requires() -> None:
    text = '[steps.serve]\ncommand = ["vllm", "serve"]\nknown_good = { vLLM = ">=0.22,<=0.26" }\n'
    step = parse_pipeline(text).steps["serve"]
    assert step.known_good == {"vllm": ">=0.22,<=0.26"}
    assert (
        "known_good"
        not in parse_pipeline(text.replace("known_good", "help = ''\n#")).steps["serve"].to_dict()
    )  # a step without one keeps its entry digest (verified runs still vouch)
    bad = r"pipeline.toml:3: steps.serve.known_good.vLLM: .0.22\+. is not a version"
    with pytest.raises(ConfigError, match=bad):
        parse_pipeline(text.replace(">=0.22,<=0.26", "0.22+"))
