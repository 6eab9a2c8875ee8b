"""The pure decisions behind the drift rules, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.evaluate import UNKNOWN, call_values, evaluate
from harness.analysis.facts import FitClass, Fits, Forwards, ReturnPath
from harness.analysis.rules.defaults import changed_defaults
from harness.analysis.rules.installs import lost, renames
from harness.analysis.rules.returns import differs, selected
from harness.analysis.uses import CallUse as CallSite
from harness.models import Parameter

P = "positional-or-keyword"
K = "keyword-only"


@pytest.mark.parametrize(
    ("cond", "values", "want"),
    [
        ("unique_reply_rank is not None", {"unique_reply_rank": 0}, True),
        ("unique_reply_rank is not None", {"unique_reply_rank": None}, False),
        ("not unique_reply_rank is not None", {"unique_reply_rank": 0}, False),
        ("unique_reply_rank is not None", {"unique_reply_rank": UNKNOWN}, None),
        ("non_block", {"non_block": False}, False),
        ("a and b", {"a": False, "b": UNKNOWN}, False),
        ("a or b", {"a": True, "b": UNKNOWN}, True),
        ("a or b", {"a": False, "b": UNKNOWN}, None),
        ("isinstance(method, str)", {"method": "x"}, True),
        ("isinstance(method, str)", {"method": 3}, False),
        ("isinstance(method, (str, Callable))", {"method": 3}, None),  # Callable: unknown here
        ("isinstance(n, int)", {"n": 3}, True),
        ("mode == 'fast'", {"mode": "slow"}, False),
        ("x in (1, 2)", {"x": 2}, True),
        ("self.is_failed", {}, None),
        ("len(x) > 1", {"x": [1]}, None),
    ],
)
def test_evaluate(cond: str, values: dict[str, Any], want: bool | None) -> None:
    assert evaluate(cond, values) is want


def test_call_values_positional_keyword_default_and_spread() -> None:
    params = (
        Parameter("method", P),
        Parameter("timeout", P, "None"),
        Parameter("rank", K, "None"),
        Parameter("hook", K, "make()"),
    )
    got = call_values(params, ["'m'"], {"rank": "0"}, spread=False)
    assert got == {"method": "m", "rank": 0, "timeout": None, "hook": UNKNOWN}
    spread = call_values(params, ["'m'"], {}, spread=True)
    assert spread["timeout"] is UNKNOWN and spread["rank"] is UNKNOWN


def _path(expr: str, shape: str, *when: str) -> ReturnPath:
    return ReturnPath(expr, 1, tuple(when), (), shape)


@pytest.mark.parametrize(
    ("now", "was", "drift"),
    [
        ([_path("responses[0]", "item(list)")], [_path("responses", "list")], True),
        ([_path("result", "list")], [_path("out", "list")], False),  # renamed local
        (
            [_path("KVCacheConfig(...)", "call:KVCacheConfig")],
            [_path("cfg", "call:KVCacheConfig")],
            False,
        ),
        ([_path("x", "?")], [_path("y", "list")], False),  # unknown says nothing
        ([], [_path("y", "list")], False),
    ],
)
def test_differs_by_shape(now: list[ReturnPath], was: list[ReturnPath], drift: bool) -> None:
    assert differs(now, was) is drift


def test_selected_keeps_paths_the_values_do_not_exclude() -> None:
    paths = (
        _path("responses[0]", "item(list)", "rank is not None"),
        _path("responses", "list", "not rank is not None"),
        _path("future", "?", "non_block"),
    )
    picked = selected(paths, {"rank": 0, "non_block": False})
    assert [p.expr for p in picked] == ["responses[0]"]
    assert len(selected(paths, {"rank": UNKNOWN, "non_block": UNKNOWN})) == 3


def _site(positional: int = 0, keywords: tuple[str, ...] = (), **kw: bool) -> CallSite:
    raw = {
        "file": "f.py",
        "line": 1,
        "ref": ["symbol", "m", "C"],
        "shape": {
            "positional": positional,
            "keywords": list(keywords),
            "star": kw.get("star", False),
            "double_star": kw.get("double_star", False),
        },
    }
    return CallSite.from_dict(raw)


OLD = (Parameter("block", P, "16"), Parameter("prefix", P, "None"), Parameter("swap", K, "4"))
NEW = (Parameter("block", P, "16"), Parameter("prefix", P, "True"), Parameter("swap", K, "4"))


@pytest.mark.parametrize(
    ("site", "names"),
    [
        (_site(keywords=("block",)), ["prefix"]),
        (_site(positional=2), []),  # prefix given by position
        (_site(keywords=("prefix",)), []),
        (_site(double_star=True), []),  # the dict may carry it
        (_site(star=True), []),  # *args may carry the positional ones
    ],
)
def test_changed_defaults(site: CallSite, names: list[str]) -> None:
    assert [p.name for _, p in changed_defaults(site, OLD, NEW)] == names


def test_respelled_default_is_not_a_change() -> None:
    old = (Parameter("x", P, "'a'"),)
    new = (Parameter("x", P, '"a"'),)
    assert changed_defaults(_site(), old, new) == []


def _fit(
    name: str,
    missing: tuple[str, ...] = (),
    bases: str = "nn.Module",
    inherits: bool | None = False,
    **methods: str,
) -> FitClass:
    return FitClass("pkg.models", name, "pkg/models.py", 1, bases, missing, dict(methods), inherits)


def test_lost_and_renamed() -> None:
    old = Fits((_fit("A", get_emb="self,ids"), _fit("B", get_emb="self,ids")), ())
    new = Fits(
        (),
        (
            _fit("A", ("get_emb",), embed_ids="self,ids"),
            _fit("B", ("get_emb",), embed_ids="self,ids"),
            _fit("C", ("get_emb",)),  # never fitted in the baseline: not "lost"
            _fit("D", ("get_emb",), bases="Helper", inherits=True),  # Helper defines it
            _fit("E", ("get_emb",), bases="Gone", inherits=None),  # base not found: unknown
        ),
    )
    old = Fits((*old.full, _fit("D", get_emb="self,ids"), _fit("E", get_emb="self,ids")), ())
    got = lost(new, old)
    assert [c.qualname for c, _ in got["get_emb"]] == ["A", "B"]
    assert renames("get_emb", got["get_emb"]) == [("embed_ids", 2)]


def _site_fw(
    target: str, params: list[tuple[str, str]], keywords: list[str] = (), **kw: Any
) -> dict:
    return {
        "target": target,
        "file": "pkg/m.py",
        "line": 1,
        "keywords": list(keywords),
        "parameters": [{"name": n, "kind": k, "default": "0"} for n, k in params],
        "extra": kw.get("extra", "forbid"),
        "forwards": kw.get("forwards"),
    }


@pytest.mark.parametrize(
    ("fw", "extras", "want"),
    [
        ({"sites": [_site_fw("Args", [("seed", P)])]}, ["seed", "x"], ["x"]),
        ({"removed": ["x"], "sites": [_site_fw("Args", [("seed", P)])]}, ["x"], []),
        ({"sites": [_site_fw("Args", [("kw", "var-keyword")])]}, ["x"], []),  # takes any
        ({"sites": [_site_fw("Model", [], extra="ignore")]}, ["x"], []),  # pydantic ignores
        ({"sites": [_site_fw("A", [("x", P)]), _site_fw("B", [])]}, ["x"], []),  # one takes it
        ({"sites": [_site_fw("A", []), _site_fw("B", [])]}, ["x"], ["x"]),
        ({"sites": [_site_fw("A", [("x", P)], keywords=["x"])]}, ["x"], ["x"]),  # twice
        (
            {
                "sites": [
                    _site_fw(
                        "Engine",
                        [("kwargs", "var-keyword")],
                        forwards={"sites": [_site_fw("Args", [("seed", P)])]},
                    )
                ]
            },
            ["seed", "y"],
            ["y"],
        ),
    ],
)
def test_forwarded_keys_rejected(fw: dict, extras: list[str], want: list[str]) -> None:
    from harness.analysis.rules.forwards import rejected

    fw = Forwards.from_dict(fw)
    assert sorted(rejected(fw, extras)) == want


@pytest.mark.parametrize(
    ("positional", "keywords", "kept"),
    [
        (3, [], False),  # update_offload_parameter(module, name, data): never reaches it
        (4, [], True),
        (1, ["offload_device"], True),
    ],
)
def test_a_removed_parameter_matters_where_a_call_reaches_it(
    positional: int, keywords: list[str], kept: bool
) -> None:
    from harness.analysis.apidiff import Change
    from harness.analysis.checker import relevant_changes

    site = CallSite.from_dict(
        {
            "file": "f.py",
            "line": 1,
            "ref": ["symbol", "m", "f"],
            "shape": {
                "positional": positional,
                "keywords": keywords,
                "star": False,
                "double_star": False,
            },
        }
    )
    got = relevant_changes(
        [Change("parameter-removed", "offload_device", None, None)], [site], {"offload_device": 3}
    )
    assert bool(got) is kept


@pytest.mark.parametrize(
    ("site", "kept"),
    [
        # Scheduler(vllm_config, kv_cache_config, ...) without the new block_size
        ({"ref": ["symbol", "m", "Scheduler"], "shape": {"positional": 2, "keywords": []}}, True),
        # ... passing it: already fixed
        (
            {
                "ref": ["symbol", "m", "Scheduler"],
                "shape": {"positional": 2, "keywords": ["block_size"]},
            },
            False,
        ),
        # self.scheduler.add_request(req): a method on an instance never passes block_size
        ({"ref": ["symbol", "m", "Scheduler"], "attr": "add_request", "on": "instance"}, False),
    ],
)
def test_a_new_required_parameter_matters_only_to_a_call_of_the_symbol(
    site: dict[str, Any], kept: bool
) -> None:
    from harness.analysis.apidiff import Change
    from harness.analysis.checker import relevant_changes
    from harness.analysis.uses import AttributeUse

    raw = {"file": "f.py", "line": 1, **site}
    if "shape" in raw:
        raw["shape"] = {"star": False, "double_star": False, **raw["shape"]}
        use: Any = CallSite.from_dict(raw)
    else:
        use = AttributeUse.from_dict(raw)
    got = relevant_changes([Change("parameter-added-required", "block_size", None, None)], [use])
    assert bool(got) is kept


@pytest.mark.parametrize(
    ("attrs", "kept"),
    [
        (["schedule"], True),  # self.scheduler.schedule(): the caller drives it
        (["is_first_rank"], False),  # get_pp_group().is_first_rank: a property, only read
        (["num_blocks"], False),  # kv_cache_config.num_blocks: an attribute
        (["num_blocks", "schedule"], True),
    ],
)
def test_a_new_method_is_a_protocol_step_only_for_an_instance_the_caller_drives(
    attrs: list[str], kept: bool
) -> None:
    from harness.analysis.apidiff import Change
    from harness.analysis.checker import relevant_changes
    from harness.analysis.uses import AttributeUse

    uses = [
        AttributeUse.from_dict(
            {"file": "f.py", "line": 1, "ref": ["symbol", "m", "C"], "attr": a, "on": "instance"}
        )
        for a in attrs
    ]
    methods = {"schedule", "add_request"}  # properties are not in it
    got = relevant_changes(
        [Change("method-added", "sample_tokens", None, None)], uses, None, methods
    )
    assert bool(got) is kept
