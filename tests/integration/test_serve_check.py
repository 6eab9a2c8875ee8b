"""Issue 32 part 3: what a step passes to ``vllm serve``, checked against real vLLM releases.

Fixture pipelines whose serve step starts vLLM with the extraction method the way speculators
0.9.0's ``launch_vllm.py`` does (``--speculative_config``/``--kv_transfer_config`` JSON), read
against ``pypi:vllm==0.26.0`` and ``pypi:vllm==0.20.2`` (the lazy target fetches only the
``.py`` members). ``speculative_token_tree`` is a field of ``SpeculativeConfig`` in 0.20.2 and
gone from 0.21.0: the same command is right on one release and refused on the other.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli

SPEC = (
    '{{"method": "extract_hidden_states", "num_speculative_tokens": 1, '
    '"draft_model_config": {{"hf_config": {{"eagle_aux_hidden_state_layer_ids": {layers}}}}}}}'
)
KV = (
    '{{"kv_connector": "ExampleHiddenStatesConnector", "kv_role": "kv_producer", '
    '"kv_connector_extra_config": {{"shared_storage_path": "{hidden_states}"}}}}'
)
#: What speculators 0.9.0's launch_vllm.py passes, plus flags a user adds: all valid from
#: vLLM 0.20 to 0.26 -- the check must say nothing of them.
GOOD = f"""\
[params]
model = "meta-llama/Llama-3.1-8B-Instruct"
layers = "[2, 16, 29, 32]"
hidden_states = "{{workdir}}/hidden_states"

[steps.serve]
help = "vLLM with the extraction method"
command = [
    "vllm", "serve", "{{model}}",
    "--speculative_config",
    '{SPEC}',
    "--kv_transfer_config",
    '{KV}',
    "--api-server-count", "1",
    "--port=8000",
    "--max_model_len", "2048",
    "--gpu-memory-utilization", "0.8",
    "-tp", "1",
    "--no-enable-prefix-caching",
    "--enforce-eager",
    "--enable-log-requests",
    "--uvicorn-log-level", "warning",
    "--served-model-name", "verifier",
]
checks = []
known_good = {{ vllm = ">=0.22,<=0.26" }}
"""


def _pipeline(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    return path


def _line(text: str, needle: str) -> int:
    return next(i for i, t in enumerate(text.splitlines(), 1) if needle in t)


def _check(path: Path, version: str, env: dict[str, str]) -> tuple[int, dict, str]:
    r = run_cli("check", "--step", "serve", "--pipeline", str(path),
                "-t", f"pypi:vllm=={version}", "--json", env=env, timeout=300)  # fmt: skip
    assert "Traceback" not in r.err, r.err
    return r.code, json.loads(r.out) if r.out.strip() else {}, r.err


def test_a_correct_serve_command_has_no_finding(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = _pipeline(tmp_path, GOOD)
    for version in ("0.26.0", "0.20.2"):
        code, report, err = _check(path, version, cli_env)
        assert (code, report["findings"]) == (0, []), (version, err)
        assert report["callees"] == {"vllm": version}
        assert report["stats"]["flags"] == 12 and report["stats"]["keys"] == 6


def test_a_removed_flag_and_a_removed_key_are_errors_at_their_line(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The same command on two releases: the key 0.20.2 still has is refused by 0.26.0."""
    text = GOOD.replace('"num_speculative_tokens": 1, ', '"num_speculative_tokens": 1, '
                        '"speculative_token_tree": "[(0,)]", ')  # fmt: skip
    text = text.replace('"--enforce-eager",', '"--enforce-eager",\n    "--disable-log-requests",')
    text = text.replace('"--gpu-memory-utilization"', '"--gpu-memory-utilisation"')
    path = _pipeline(tmp_path, text)
    spec_line = _line(text, "speculative_token_tree")

    code, report, _err = _check(path, "0.26.0", cli_env)
    assert code == 1
    got = [(f["line"], f["severity"], f["category"], f["keywords"], f["fix"])
           for f in report["findings"]]  # fmt: skip
    assert got == [
        (spec_line, "error", "serve-argument", ["speculative_token_tree"],
         "Did you mean 'num_speculative_tokens'?"),
        (_line(text, "utilisation"), "error", "serve-argument", ["--gpu-memory-utilisation"],
         "Did you mean --gpu-memory-utilization?"),
        (_line(text, "--disable-log"), "error", "serve-argument", ["--disable-log-requests"],
         "Did you mean --enable-log-requests?"),
    ]  # fmt: skip
    first = report["findings"][0]
    assert first["file"] == str(path)
    assert (first["callee_file"], first["callee_line"]) == ("vllm/config/speculative.py", 82)
    assert "is not a field of SpeculativeConfig in vllm 0.26.0" in first["message"]

    code, report, _err = _check(path, "0.20.2", cli_env)  # the key was there then
    assert [f["keywords"] for f in report["findings"]] == [
        ["--gpu-memory-utilisation"],
        ["--disable-log-requests"],
    ]

    r = run_cli("check", "--step", "serve", "--pipeline", str(path), "-t",
                "pypi:vllm==0.26.0", env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1
    said = f"  :{spec_line} error serve-argument  --speculative-config: 'speculative_token_tree'"
    assert said in r.out
    assert "3 error(s), 0 warning(s), 0 info — 13 flags, 7 config keys checked" in r.out


def test_the_review_gates_on_the_serve_arguments_and_says_the_known_range(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    bad = _pipeline(tmp_path, GOOD.replace('"--enforce-eager"', '"--enforce-eagre"'))
    r = run_cli("report", "serve", "--pipeline", str(bad), "-t", "pypi:vllm==0.26.0",
                "--format", "json", env=cli_env, timeout=300)  # fmt: skip
    review = json.loads(r.out)
    assert review["verdict"] == "not ready"
    texts = {x["text"]: x for x in review["reasons"]}
    line = _line(GOOD, "--enforce-eager")
    blocker = texts[f"{bad}:{line}: vllm 0.26.0's vllm serve has no flag --enforce-eagre: it "
                    "exits with 'unrecognized arguments' before any model loads"]  # fmt: skip
    assert (blocker["severity"], blocker["hint"]) == ("blocker", "Did you mean --enforce-eager?")
    assert review["serve"]["findings"][0]["keywords"] == ["--enforce-eagre"]
    known = next(t for t in texts if "known to work in" in t)
    assert known.startswith("step serve: vllm 0.26.0, in the range its environment is known")
    assert texts[known]["severity"] == "info"

    r = run_cli("report", "serve", "--pipeline", str(bad), "-t", "pypi:vllm==0.20.2",
                "--format", "json", env=cli_env, timeout=300)  # fmt: skip
    reasons = json.loads(r.out)["reasons"]
    (outside,) = [x for x in reasons if "known to work in" in x["text"]]
    assert outside["severity"] == "warning"
    assert outside["text"].startswith("step serve: vllm 0.20.2, outside the range")


def test_a_caller_and_its_serve_step_are_one_report(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The two environments' coupling in one command: hs-connectors' imports of vLLM and the
    server's arguments, against the same vLLM."""
    path = _pipeline(tmp_path, GOOD.replace('"--enforce-eager"', '"--enforce-eagre"'))
    r = run_cli("check", "hs-connectors", "--against", "vllm", "--step", "serve", "--pipeline",
                str(path), "-t", "pypi:hs-connectors==0.9.0,vllm==0.26.0", "--json",
                env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1, r.err
    report = json.loads(r.out)
    assert [(f["category"], f["keywords"]) for f in report["findings"]] == [
        ("serve-argument", ["--enforce-eagre"])
    ]
    assert report["caller"] == "hs-connectors" and report["callees"]["vllm"] == "0.26.0"
    assert (report["stats"]["flags"], report["stats"]["keys"]) == (12, 6)
    assert report["stats"]["files"] > 0


SHIPPED = Path(__file__).resolve().parents[2] / "pipelines" / "speculators-0.9.toml"


def test_the_shipped_speculators_0_9_serve_step_is_clean_where_it_runs(
    cli_env: dict[str, str],
) -> None:
    """pipelines/speculators-0.9.toml's serve command, as shipped and with the bench's
    settings (``--enforce-eager``, caching on), on the two releases the H200 bench runs; a
    mistyped flag given through ``--set`` is an error naming the pipeline file and the fix."""
    for version in ("0.24.0", "0.26.0"):
        code, report, err = _check(SHIPPED, version, cli_env)
        assert (code, report["findings"]) == (0, []), (version, err)
        assert report["stats"]["keys"] == 7
    for value in ("--enforce-eager", "--enable-prefix-caching"):
        key = "enforce_eager" if "eager" in value else "prefix_caching"
        r = run_cli("check", "--step", "serve", "--pipeline", str(SHIPPED), "-t",
                    "pypi:vllm==0.26.0", "--set", f"{key}={value}", "--json",
                    env=cli_env, timeout=300)  # fmt: skip
        assert (r.code, json.loads(r.out)["findings"]) == (0, []), (value, r.err)
    for typo, fix in (
        ("--enforce-eagr", "Did you mean --enforce-eager?"),
        ("--no-max-model-len", "Did you mean --max-model-len?"),  # an int: no --no- form
    ):
        r = run_cli("check", "--step", "serve", "--pipeline", str(SHIPPED), "-t",
                    "pypi:vllm==0.26.0", "--set", f"enforce_eager={typo}", "--json",
                    env=cli_env, timeout=300)  # fmt: skip
        assert r.code == 1, typo
        (finding,) = json.loads(r.out)["findings"]
        assert (finding["file"], finding["keywords"], finding["fix"]) == (str(SHIPPED), [typo], fix)


def test_the_shipped_smoke_server_flags_are_checked_with_smoke(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``check --step serve --smoke``: the command a ``--smoke`` run starts -- vLLM's own
    ``--load-format dummy --hf-overrides`` and the mapped layer ids -- against the releases the
    H200 runs; a mistyped smoke flag is an error at its ``args`` line."""
    for version in ("0.24.0", "0.26.0"):
        r = run_cli("check", "--step", "serve", "--smoke", "--pipeline", str(SHIPPED), "-t",
                    f"pypi:vllm=={version}", "--json", env=cli_env, timeout=300)  # fmt: skip
        report = json.loads(r.out)
        assert (r.code, report["findings"]) == (0, []), (version, r.err)
        assert report["stats"]["flags"] == 11  # 9 and the two of the cut
    typo = tmp_path / "p.toml"
    text = SHIPPED.read_text().replace('"--load-format", "dummy"', '"--load-formatt", "dummy"')
    typo.write_text(text)
    r = run_cli("check", "--step", "serve", "--smoke", "--pipeline", str(typo), "-t",
                "pypi:vllm==0.26.0", "--json", env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1
    (finding,) = json.loads(r.out)["findings"]
    line = text.splitlines()[finding["line"] - 1]
    assert line.startswith("args = [") and finding["fix"] == "Did you mean --load-format?"


FP8 = (
    "--set", "kv_connector=FP8HiddenStatesConnector", "--set", "hs_backend=fp8",
    "--set", "kv_connector_module=hs_connectors.fp8_hidden_states_connector",
)  # fmt: skip


def test_the_connector_is_checked_where_the_server_runs(cli_env: dict[str, str]) -> None:
    """hs-connectors' FP8 connector runs inside ``vllm serve``: against vLLM 0.26.0 alone (the
    two-environment layout, hs-connectors installed beside speculators only) the shipped
    pipeline's FP8 settings are an error naming the fix; with hs-connectors 0.9.0 in the same
    environment, clean; a mistyped connector name is an error either way, with the nearest
    name (vLLM's registry for a bare name, the module's classes for a module path)."""

    def check(target: str, *sets: str) -> tuple[int, list[dict]]:
        r = run_cli("check", "--step", "serve", "--pipeline", str(SHIPPED), "-t", target,
                    *sets, "--json", env=cli_env, timeout=300)  # fmt: skip
        assert "Traceback" not in r.err, r.err
        return r.code, json.loads(r.out)["findings"]

    code, found = check("pypi:vllm==0.26.0", *FP8)
    assert code == 1
    (f,) = found
    assert f["keywords"] == ["kv_connector_module_path"] and f["file"] == str(SHIPPED)
    assert (
        "'hs_connectors.fp8_hidden_states_connector' is not installed where vllm 0.26.0 is"
        in (f["message"])
    )
    assert "into the server's environment" in f["fix"]
    assert check("pypi:vllm==0.26.0,hs-connectors==0.9.0", *FP8) == (0, [])
    typo = ("--set", "kv_connector=FP8HiddenStateConnector")
    code, found = check("pypi:vllm==0.26.0,hs-connectors==0.9.0", *FP8, *typo)
    assert code == 1 and [x["fix"] for x in found] == ["Did you mean 'FP8HiddenStatesConnector'?"]
    code, found = check("pypi:vllm==0.24.0", "--set", "kv_connector_module=")
    assert code == 0 and [(x["severity"], x["keywords"]) for x in found] == [
        ("warning", ["kv_connector_module_path"])
    ]


def test_a_connector_name_vllm_does_not_register_is_an_error(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """speculators' launch_vllm.py names the connector alone (vLLM's registry): a typo of it
    is refused at start-up -- now an error at its line, pointing at vLLM's factory."""
    text = GOOD.replace("ExampleHiddenStatesConnector", "ExampleHiddenStateConnector")
    path = _pipeline(tmp_path, text)
    for version in ("0.26.0", "0.20.2"):
        code, report, _err = _check(path, version, cli_env)
        assert code == 1, version
        (f,) = report["findings"]
        assert (f["line"], f["keywords"], f["fix"]) == (
            _line(text, "ExampleHiddenStateConnector"),
            ["kv_connector"],
            "Did you mean 'ExampleHiddenStatesConnector'?",
        )
        assert f["callee_file"] == "vllm/distributed/kv_transfer/kv_connector/factory.py"
        assert f"is not a KV connector vllm {version} registers" in f["message"]
