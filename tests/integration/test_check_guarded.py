"""`harness check` on a released caller whose guarded import breaks (issue 34, class 6).

ms-swift 3.6.4 (``vllm>=0.5.1,<0.9`` in its requirements) ``swift/llm/infer/rollout.py``::

    try:
        from vllm.utils import get_open_port           # :30
        from trl.scripts.vllm_serve import chunk_list  # :31
    except ImportError:
        pass

then ``self.master_port = get_open_port()`` in ``SwiftRolloutDeploy.__init__`` (:155) and
``chunk_list(infer_requests, self.num_connections)`` in ``infer`` (:318), neither guarded. vLLM
0.8.5.post1 defines ``get_open_port`` in ``vllm/utils.py``; 0.16.0 moved it to
``vllm/utils/network_utils.py:150`` and ``vllm/utils/__init__.py`` neither imports it nor has a
module ``__getattr__``. So on 0.16.0 :30 raises ImportError, :31 never runs, and both uses are
a NameError when reached (ms-swift 4.0.0 fixed it with a version check importing from
``vllm.utils.network_utils``). ``trl`` is not on the target: :31 is unbound because :30 fails,
whatever trl has.

ms-swift 3.12.6 on vLLM 0.16.0 has the same break (:51/:52, used at :344/:598) beside guarded
imports it truly treats as optional, which stay silent: trainers/rlhf_trainer/utils.py:914
``from vllm.transformers_utils.tokenizer_group import TokenizerGroup`` (removed in 0.16.0), whose
handler binds ``TokenizerGroup = None`` and whose use at :1001 is under ``if TokenizerGroup is
not None``; rollout.py:9 ``GuidedDecodingParams``, which nothing uses unguarded. And the
``except ImportError`` fallback of an import that binds never runs (infer_engine/vllm_engine.py
:36/:39 on 0.16.0; trainers/rlhf_trainer/utils.py :907/:910 on 0.11.0): no error.
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli

ROLLOUT = "swift/llm/infer/rollout.py"
ARGS = ("--against", "vllm", "--baseline", "vllm==0.8.5.post1")


def check(env: dict[str, str], spec: str, *args: str) -> dict:
    r = run_cli("check", "ms-swift", "-t", f"pypi:{spec}", "--json", *ARGS, *args, env=env)
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def unbound(data: dict) -> dict[tuple[str, int], dict]:
    return {
        (f["file"], f["line"]): f
        for f in data["findings"]
        if f["severity"] == "error" and f["category"] == "unbound-name"
    }


def test_ms_swift_rollout_on_vllm_016_names_what_the_failed_import_left_unbound(
    cli_env: dict[str, str],
) -> None:
    control = check(cli_env, "ms-swift==3.6.4,vllm==0.8.5.post1")
    assert control["summary"] == {"error": 0, "warning": 0, "info": 0}
    data = check(cli_env, "ms-swift==3.6.4,vllm==0.16.0")
    got = unbound(data)
    assert set(got) == {(ROLLOUT, 155), (ROLLOUT, 318)}
    own, later = got[(ROLLOUT, 155)], got[(ROLLOUT, 318)]
    assert own["message"] == (
        "name 'get_open_port' is not defined: `from vllm.utils import get_open_port` (line 30) "
        "fails on vllm 0.16.0 and the except branch binds nothing"
    )
    assert later["message"] == (
        "name 'chunk_list' is not defined: `from vllm.utils import get_open_port` (line 30) "
        "fails on vllm 0.16.0 before line 31 binds it, and the except branch binds nothing"
    )
    for f in (own, later):  # what --fix edits: the import that fails
        assert (f["symbol"], f["imported"], f["origin_line"]) == (
            "vllm.utils:get_open_port",
            "get_open_port",
            30,
        )
    assert later["scope"] == "SwiftRolloutDeploy.infer"


def test_ms_swift_fix_moves_the_import_and_both_uses_bind(cli_env: dict[str, str]) -> None:
    data = check(cli_env, "ms-swift==3.6.4,vllm==0.16.0", "--fix", "--dry-run")
    moved = [f for f in data["fixed"] if f["file"] == ROLLOUT]
    assert {(f["line"], f["kind"]) for f in moved} == {(155, "moved-import"), (318, "moved-import")}
    assert "-    from vllm.utils import get_open_port\n" in data["diff"]
    assert "+    from vllm.utils.network_utils import get_open_port\n" in data["diff"]


def test_ms_swift_truly_optional_imports_stay_silent(cli_env: dict[str, str]) -> None:
    data = check(cli_env, "ms-swift==3.12.6,vllm==0.16.0")
    assert set(unbound(data)) == {(ROLLOUT, 344), (ROLLOUT, 598)}
    utils = "swift/trainers/rlhf_trainer/utils.py"
    guarded = {
        (f["file"], f["line"])
        for f in data["findings"]
        if f["category"] == "import-guarded" and f["severity"] == "info"
    }
    assert {(utils, 914), (ROLLOUT, 9), (ROLLOUT, 51)} <= guarded
    # the fallback of an import that binds never runs: vllm_engine.py:36 ``from
    # vllm.sampling_params import StructuredOutputsParams`` binds on 0.16.0, so :39's
    # ``GuidedDecodingParams as StructuredOutputsParams`` (gone in 0.16.0) is no error
    engine = "swift/llm/infer/infer_engine/vllm_engine.py"
    (fb,) = [f for f in data["findings"] if (f["file"], f["line"]) == (engine, 39)]
    assert (fb["severity"], fb["category"]) == ("info", "import-guarded")
    assert "fallback of line 36" in fb["message"]
    # TokenizerGroup: bound to None by the handler, and every use tests it first
    tokenizer_group = {914, 917, 993, 1001, 1002, 1003}
    assert not [
        f
        for f in data["findings"]
        if f["severity"] != "info" and f["file"] == utils and f["line"] in tokenizer_group
    ]
