"""A failed step's server lines read for known faults: the dropped final layer named in words."""

# ruff: noqa: E501 -- the fixtures are log lines as the supervisor writes them

from __future__ import annotations

import pytest

from harness.runs.follow.failure import summarize
from harness.runs.follow.service_faults import service_fault

SID = "serve-20261202-101530-ab12"
#: the line the H200 brought back (vLLM 0.24.0, the DeepSeek-V3 shape, ids [2, 12, 21, 24]): torch on
#: ExtractHiddenStatesProposer copying 3 aux states into its 4-slot buffer
SHORT = "RuntimeError: The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  Target sizes: [65, 4, 512].  Tensor sizes: [65, 3, 512]"


@pytest.mark.parametrize(
    ("line", "named"),
    [
        (f"harness: service {SID}: {SHORT}", "the last one of layer_ids"),
        (
            f"harness: service {SID}: RuntimeError: The expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension 1.  Target sizes: [9, 4, 64].  Tensor sizes: [9, 2, 64]",
            "the last 2 of layer_ids",
        ),
        # more states than slots, another dimension, a line not from a service: not this fault
        (
            f"harness: service {SID}: RuntimeError: The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 1.",
            None,
        ),
        (
            f"harness: service {SID}: RuntimeError: The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 2.",
            None,
        ),
        (SHORT, None),
        (f"harness: service {SID}: EngineCore encountered a fatal error.", None),
    ],
)
def test_the_dropped_final_layer_is_named_from_the_servers_line(
    line: str, named: str | None
) -> None:
    fault = service_fault(["some client line", line], "gpu")
    if named is None:
        assert fault is None
        return
    assert fault is not None
    assert fault.service == SID
    assert named in fault.hint
    assert "PR 46973" in fault.hint and "0.25.0" in fault.hint
    assert fault.commands == ("harness patches -t gpu", "harness apply-patches --dist vllm -t gpu")


CLIENT_500 = f"""\
Traceback (most recent call last):
  File "/root/spec09/speculators/data_generation/offline.py", line 210, in generate
    raise RuntimeError(f"{{failed}} requests failed")
RuntimeError: 64 requests failed
harness: service {SID}: EngineCore encountered a fatal error.
harness: service {SID}: {SHORT}
"""


def test_a_client_that_saw_500s_gets_the_servers_fault_as_its_root_cause() -> None:
    s = summarize(CLIENT_500, "gpu", "generate")
    assert s is not None
    assert s.exc_type == "RuntimeError" and s.message == "64 requests failed"
    cause = s.root_cause
    assert cause is not None
    assert cause.exc_type == f"RuntimeError (service {SID})"
    assert cause.message.startswith("The expanded size of the tensor (4)")
    assert cause.hint is not None and "4 layer ids" in cause.hint
    assert cause.commands[0] == "harness patches -t gpu"


def test_the_servers_fault_alone_is_a_summary_and_other_server_lines_change_nothing() -> None:
    alone = summarize(f"harness: service {SID}: {SHORT}\n", "gpu")
    assert alone is not None and alone.hint is not None and "3 hidden states" in alone.hint
    plain = CLIENT_500.replace(SHORT, "RuntimeError: CUDA error: an illegal memory access")
    s = summarize(plain, "gpu", "generate")
    assert s is not None and s.root_cause is None and s.hint is None
    assert summarize("harness: service x: EngineCore encountered a fatal error.\n") is None
