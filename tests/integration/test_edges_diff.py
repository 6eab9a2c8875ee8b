"""Issue 21 item 14: `harness diff` on the real vllm 0.11.0 -> 0.16.0 wheels and speculators
0.3.0 -- its exit code, and what ``--used-by`` lists."""

from __future__ import annotations

import json

from tests.support.cli import run_cli

ARGS = (
    "diff",
    "vllm",
    "--from",
    "pypi:vllm==0.11.0",
    "--to",
    "pypi:vllm==0.16.0,speculators==0.3.0",
)


def test_diff_exits_1_when_it_finds_breaking_changes(cli_env: dict[str, str]) -> None:
    """As `check` does for errors: a script (CI) can stop on a breaking move."""
    for extra in ((), ("--json",)):
        r = run_cli(*ARGS, "--used-by", "speculators", *extra, env=cli_env)
        assert r.code == 1, (extra, r.err)
        assert "Traceback" not in r.err
    assert json.loads(r.out)["counts"]["breaking"] == 5
    # no breaking change: 0 (the same version on both sides)
    r = run_cli("diff", "speculators", "--from", "pypi:speculators==0.3.0",
                "--to", "pypi:speculators==0.3.0", env=cli_env)  # fmt: skip
    assert r.code == 0, r.err


def test_used_by_lists_only_methods_the_caller_can_notice(cli_env: dict[str, str]) -> None:
    """speculators constructs ModelConfig, ParallelConfig, Request...: their new methods are
    nothing it can notice (before: 19 method changes on ModelConfig alone). It drives the
    executor by calling its methods: its new ``sample_tokens`` step stays."""
    r = run_cli(*ARGS, "--used-by", "speculators", "--json", env=cli_env)
    data = json.loads(r.out)
    by = {e["symbol"]: {(c["kind"], c["name"]) for c in e["changes"]} for e in data["entries"]}
    for only_built in ("vllm.config:ModelConfig", "vllm.config:ParallelConfig",
                       "vllm.v1.request:Request", "vllm.config:VllmConfig"):  # fmt: skip
        assert only_built not in by, (only_built, by.get(only_built))
    assert by["vllm.config:SchedulerConfig"] == {("parameter-added-required", "is_encoder_decoder")}
    assert ("method-added", "sample_tokens") in by[
        "vllm.v1.executor.multiproc_executor:MultiprocExecutor"
    ]


def test_check_folds_long_now_signatures_to_what_the_finding_is_about(
    cli_env: dict[str, str],
) -> None:
    """``now:`` lines reached ~2,400 characters (VllmConfig, CacheConfig); ``--json`` keeps
    the whole signature."""
    target = ("-t", "pypi:speculators==0.3.0,vllm==0.16.0")
    r = run_cli("check", "speculators", *target, env=cli_env)
    assert r.code == 1, r.err
    now = [line.strip() for line in r.out.splitlines() if line.strip().startswith("now: ")]
    assert now and max(len(line) for line in now) < 320, max(now, key=len)
    assert any(
        line.startswith("now: CacheConfig(..., enable_prefix_caching: bool = True, ...)")
        for line in now
    ), now
    assert any(
        line.startswith(
            "now: SchedulerConfig(max_model_len: InitVar[int], is_encoder_decoder: "
            "InitVar[bool], ...)"
        )
        for line in now
    ), now
    data = json.loads(run_cli("check", "speculators", *target, "--json", env=cli_env).out)
    assert max(len(f["signature"] or "") for f in data["findings"]) > 1000
