"""``check --step serve``: the KV connector ``--kv-transfer-config`` names, against what the
server's environment has -- a name vLLM registers, or a class of a module the server can
import (hs-connectors' connectors run inside ``vllm serve``). Pure decisions by a table, and
the probe's reading of a vLLM-shaped source; real releases in test_serve_check.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis.checker import Checker
from harness.analysis.scan import CallerInfo, Scan
from harness.analysis.serve import ConnectorModule, ServeFacts, ServeVocab, find_serve, probe_args
from harness.analysis.uses import Site
from probes.signatures import serveargs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "serve"
REGISTERED = {"ExampleConnector": 12, "ExampleHiddenStatesConnector": 16, "NixlConnector": 20}
FP8 = "hs_connectors.fp8_hidden_states_connector"
HAS_FP8 = ConnectorModule(FP8, True, "hs_connectors/fp8.py", {"FP8HiddenStatesConnector": 30})


def _at(index: int, _text: str) -> Site:
    return Site("pipeline.toml", index)


def _kv(name: str, module: str | None = None) -> str:
    d = {"kv_connector": name, "kv_role": "kv_producer"}
    return json.dumps({**d, "kv_connector_module_path": module} if module else d)


def _said(kv: str, module: ConnectorModule | None, registered: dict | None = REGISTERED) -> list:
    call = find_serve(["vllm", "serve", "m", "--kv-transfer-config", kv], _at)
    assert call is not None
    vocab = ServeVocab("vllm", "0.26.0", flags=frozenset({"--kv-transfer-config"}),
                       connectors=registered, connectors_file="vllm/factory.py",
                       connector_module=module)  # fmt: skip
    got = Checker(Scan(CallerInfo("step serve", None), {}), {}, serve=ServeFacts(call, vocab)).run()
    return [(f.keywords[0], f.message, f.fix, f.callee_line) for f in got]


CASES = [
    # registered by name, or a class its module defines: nothing to say
    (_kv("ExampleHiddenStatesConnector"), None, REGISTERED, []),
    (_kv("FP8HiddenStatesConnector", FP8), HAS_FP8, REGISTERED, []),
    # the factory not read (an older vLLM): nothing to say of names
    (_kv("Whatever"), None, None, []),
    # a name this vLLM does not register: refused at start-up, the nearest one named
    (_kv("ExampleHiddenStateConnector"), None, REGISTERED,
     [("kv_connector", "--kv-transfer-config: 'ExampleHiddenStateConnector' is not a KV "
       "connector vllm 0.26.0 registers: the server refuses it at start-up (unsupported "
       "connector type)", "Did you mean 'ExampleHiddenStatesConnector'?", 16)]),
    # the module is not where vLLM is: the two-environment trap
    (_kv("FP8HiddenStatesConnector", FP8), ConnectorModule(FP8, False), REGISTERED,
     [("kv_connector_module_path", f"--kv-transfer-config: kv_connector_module_path '{FP8}' "
       "is not installed where vllm 0.26.0 is: the server imports it at start-up "
       "(ModuleNotFoundError)", "Install the package that has hs_connectors into the "
       "server's environment (the serve step's interpreter), not only beside the client: "
       "e.g. hs-connectors for hs_connectors.", None)]),
    # the module is there, the class is not
    (_kv("FP8HiddenStateConnector", FP8), HAS_FP8, REGISTERED,
     [("kv_connector", f"--kv-transfer-config: {FP8} defines no class "
       "'FP8HiddenStateConnector': the server refuses it at start-up",
       "Did you mean 'FP8HiddenStatesConnector'?", 30)]),
]  # fmt: skip


@pytest.mark.parametrize(("kv", "module", "registered", "want"), CASES)
def test_what_the_serve_rule_says_of_the_connector(
    kv: str, module: ConnectorModule | None, registered: dict | None, want: list
) -> None:
    assert _said(kv, module, registered) == want


def test_the_probe_asks_for_the_module_the_call_names() -> None:
    call = find_serve(["vllm", "serve", "--kv-transfer-config", _kv("X", FP8)], _at)
    assert probe_args(call)["connectors"]["module"] == FP8
    assert probe_args()["connectors"]["module"] is None


def test_the_registered_names_and_the_modules_classes_read_from_source() -> None:
    args = {**probe_args(), "paths": [str(FIXTURE)], "connectors": {
        "factory": "vllm.distributed.kv_transfer.kv_connector.factory", "module": FP8}}  # fmt: skip
    vocab = ServeVocab.from_dict(serveargs.run(args, print))
    assert vocab.connectors is not None
    assert set(vocab.connectors) == {"ExampleConnector", "ExampleHiddenStatesConnector"}
    assert vocab.connectors_file == "vllm/distributed/kv_transfer/kv_connector/factory.py"
    module = vocab.connector_module
    assert module is not None and module.found
    assert set(module.classes) == {"FP8HiddenStatesConnector", "Fallback"}
    missing = {**args, "connectors": {"factory": "nowhere", "module": "hs_connectors.nope"}}
    vocab = ServeVocab.from_dict(serveargs.run(missing, print))
    assert vocab.connectors is None
    assert vocab.connector_module == ConnectorModule("hs_connectors.nope", False)
