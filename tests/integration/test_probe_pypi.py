"""``harness probe`` on the real vLLM 0.16.0 wheel through the embedded ``pypi:`` target."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli

V16 = "pypi:vllm==0.16.0"


def test_kv_cache_signature_and_location(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "probe",
        "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups",
        "-t",
        V16,
        env=cli_env,
    )
    assert r.code == 0, r.err
    assert (
        "(vllm_config: VllmConfig, kv_cache_groups: list[KVCacheGroupSpec], "
        "available_memory: int) -> KVCacheConfig"
    ) in r.out
    assert "vllm/v1/core/kv_cache_utils.py:1069" in r.out


def test_scheduler_config_reexport_and_required_initvars(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "vllm.config:SchedulerConfig", "-t", V16, "--json", env=cli_env)
    assert r.code == 0, r.err
    data = json.loads(r.out)
    sym = data["symbols"][0]
    assert (sym["file"], sym["line"]) == ("vllm/config/scheduler.py", 26)
    assert [h["file"] for h in data["chain"]] == [
        "vllm/config/__init__.py",
        "vllm/config/scheduler.py",
    ]
    required = [p["name"] for p in sym["parameters"] if p["default"] is None]
    assert required == ["max_model_len", "is_encoder_decoder"]
    assert sym["constructor"]["via"] == "dataclass_transform:vllm.config.utils.config"
    assert (sym["dist"], sym["version"]) == ("vllm", "0.16.0")
    # the terminal view says the same
    text = run_cli("probe", "vllm.config:SchedulerConfig", "-t", V16, env=cli_env).out
    assert "vllm/config/scheduler.py:26" in text
    assert "max_model_len: InitVar[int]  required" in text
    assert "is_encoder_decoder: InitVar[bool]  required" in text


def test_source_is_printed_with_line_numbers(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "probe",
        "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups",
        "-t",
        V16,
        "--source",
        env=cli_env,
    )
    assert r.code == 0, r.err
    assert "1069 def get_kv_cache_config_from_groups(" in r.out


def test_unknown_module_suggests_close_names(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "vllm.v1.core.kv_cache_util", "-t", V16, env=cli_env)
    assert r.code == 2
    assert "Traceback" not in r.err
    assert "no module named 'vllm.v1.core.kv_cache_util'" in r.err
    assert "vllm.v1.core.kv_cache_utils" in r.err


def test_attribute_written_as_module_gets_the_colon_hint(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "vllm.config.SchedulerConfig", "-t", V16, env=cli_env)
    assert r.code == 2
    assert "vllm.config:SchedulerConfig" in r.err


def test_dist_not_in_target_lists_searched_paths(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "torch.nn", "-t", V16, env=cli_env)
    assert r.code == 2
    assert "no module named 'torch'" in r.err
    assert "vllm-0.16.0" in r.err  # the unpacked wheel folder that was searched


def test_hostile_module_names_are_refused_before_any_target(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    for ref in (f"x; touch {marker}", f"$(touch {marker})", f"`touch {marker}`"):
        r = run_cli("probe", ref, "-t", V16, env=cli_env)
        assert r.code == 2
        assert "is not a module reference" in r.err
    assert not marker.exists()


def test_real_pip_download_into_an_empty_cache(tmp_path: Path, cli_env: dict[str, str]) -> None:
    """The pypi: target's own download path (small wheel), then a read-only unpacked copy."""
    env = {**cli_env, "HARNESS_CACHE": str(tmp_path / "cache")}
    r = run_cli(
        "probe",
        "speculators.data_generation.vllm_hidden_states_generator",
        "-t",
        "pypi:speculators==0.3.0",
        "--json",
        env=env,
    )
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert (data["dist"], data["version"]) == ("speculators", "0.3.0")
    assert "VllmHiddenStatesGenerator" in {s["qualname"] for s in data["symbols"]}
    unpacked = tmp_path / "cache" / "pypi" / "speculators-0.3.0"
    some = unpacked / "speculators" / "__init__.py"
    assert some.exists() and not (some.stat().st_mode & 0o222)
    assert not list(unpacked.rglob("*.so"))


def test_bad_pypi_spec_is_a_usage_error(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "vllm", "-t", "pypi:vllm>=0.16", env=cli_env)
    assert r.code == 2
    assert "must be NAME or NAME==VERSION" in r.err


T517 = "pypi:transformers==5.17.0,huggingface-hub==1.33.0"


def _probe_json(target: str, ref: str, cli_env: dict[str, str]) -> dict:
    r = run_cli("probe", ref, "-t", target, "--json", env=cli_env)
    assert r.code == 0, r.err
    return json.loads(r.out)["symbols"][0]


def test_an_enum_signs_as_the_python_the_target_runs(cli_env: dict[str, str]) -> None:
    """Issue 34: ``IntervalStrategy(ExplicitEnum)`` (``ExplicitEnum(str, Enum)``) is called
    ``(value, names=None, *, ...)`` on 3.11 and ``(*values)`` on 3.12; a ``pypi:`` target's
    ``python==`` pin says which (the probe runs here, on this Python, either way)."""
    ref = "transformers.trainer_utils:IntervalStrategy"
    old = _probe_json(f"{T517},python==3.11", ref, cli_env)
    assert [(p["name"], p["kind"]) for p in old["parameters"]][:2] == [
        ("value", "positional-or-keyword"),
        ("names", "positional-or-keyword"),
    ]
    new = _probe_json(f"{T517},python==3.12", ref, cli_env)
    assert [(p["name"], p["kind"]) for p in new["parameters"]] == [("values", "var-positional")]
    assert new["constructor"]["via"] == "enum"
    r = run_cli("probe", ref, "-t", f"{T517},python==2.7", env=cli_env)
    assert r.code != 0 and "python==2.7" in r.err  # negative: not a Python 3 version


def test_auto_classes_get_the_members_auto_class_update_sets(cli_env: dict[str, str]) -> None:
    """``AutoModelForMaskedLM = auto_class_update(AutoModelForMaskedLM)``: from_config and
    from_pretrained are ``classmethod(copy_func(_BaseAutoModelClass.X))``, copies of bound
    classmethods, which sign without ``cls`` (``__wrapped__``)."""
    sym = _probe_json(T517, "transformers.models.auto.modeling_auto:AutoModelForMaskedLM", cli_env)
    members = {m["qualname"].rpartition(".")[2]: m for m in sym["members"]}
    assert [p["name"] for p in members["from_config"]["parameters"]] == ["config", "kwargs"]
    assert [p["name"] for p in members["from_pretrained"]["parameters"]] == [
        "pretrained_model_name_or_path",
        "model_args",
        "kwargs",
    ]
    assert members["from_config"]["kind"] == "classmethod"


def test_a_base_made_by_a_factory_call_on_vllm(cli_env: dict[str, str]) -> None:
    """``class LlamaBidirectionalModel(as_embedding_model(LlamaForCausalLM))``: constructed
    through the ``ModelForPooling.__init__`` the factory's class inherits."""
    sym = _probe_json(
        "pypi:vllm==0.20.2", "vllm.model_executor.models.llama:LlamaBidirectionalModel", cli_env
    )
    assert [(p["name"], p["kind"]) for p in sym["parameters"]] == [
        ("vllm_config", "keyword-only"),
        ("prefix", "keyword-only"),
        ("kwargs", "var-keyword"),
    ]
    assert sym["constructor"]["from"].startswith("vllm.model_executor.models.adapters.")


def test_a_function_made_by_a_factory_call_on_vllm(cli_env: dict[str, str]) -> None:
    """``flashinfer_cutlass_fused_moe = _lazy_import_wrapper(...)``: the def the factory
    returns, ``(*args, **kwargs)``, where it was a variable with no signature."""
    sym = _probe_json(
        "pypi:vllm==0.20.2", "vllm.utils.flashinfer:flashinfer_cutlass_fused_moe", cli_env
    )
    assert sym["kind"] == "function"
    assert [(p["name"], p["kind"]) for p in sym["parameters"]] == [
        ("args", "var-positional"),
        ("kwargs", "var-keyword"),
    ]
