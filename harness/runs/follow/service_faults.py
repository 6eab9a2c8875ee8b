"""A server's own error lines, as a failed step's log carries them, read for known faults.

Pure. When a step that used a service fails, the supervisor writes the server's error lines
into the step's log as ``harness: service RUN: LINE`` (the client itself saw only 500s). Each
rule in :data:`RULES` reads one such line and, when it knows the fault, says what is missing in
the user's words and what to run.

The one rule today is the dropped final layer (issue 32, measured on the H200): vLLM's
``ExtractHiddenStatesProposer`` sizes its buffer by the layer ids asked for and copies the
model's auxiliary hidden states into it (``vllm/v1/spec_decode/extract_hidden_states.py:73-78``
and ``:125-129`` in 0.24.0); a DeepSeek-V2-family model before vLLM 0.25.0 (PR 46973) returns
no state for the final layer, so torch refuses the copy at the first request and the engine
core dies -- loudly on this path, and the words must say which layer is gone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

#: ``harness: service serve-20261202-...: RuntimeError: ...`` (probes/runs/_service.py)
_SERVICE_LINE = re.compile(r"^harness: service (?P<run>[\w.:-]+): (?P<line>.+)$")
#: torch's words when [tokens, got, hidden] is copied into [tokens, want, hidden]
_FEWER_STATES = re.compile(
    r"The expanded size of the tensor \((?P<want>\d+)\) must match the existing size "
    r"\((?P<got>\d+)\) at non-singleton dimension 1\b"
)


@dataclass(frozen=True)
class ServiceFault:
    """A known fault read off one of the server's lines: the line, what it means, what to run."""

    service: str
    line: str
    hint: str
    commands: tuple[str, ...] = ()


def _fewer_states(line: str, flag: str) -> tuple[str, tuple[str, ...]] | None:
    m = _FEWER_STATES.search(line)
    if m is None or int(m["got"]) >= int(m["want"]):
        return None
    want, got = int(m["want"]), int(m["got"])
    last = "the last one" if want - got == 1 else f"the last {want - got}"
    return (
        f"the server's model returned {got} hidden states per token for {want} layer ids: "
        f"{last} of layer_ids came back with no state -- the final layer, when it is the "
        "model's num_hidden_layers. DeepSeek-V2-family models (DeepSeek-V3, Kimi K2) drop the "
        "final layer's state on vLLM before 0.25.0 (PR 46973): serve with vLLM 0.25.0 or later, "
        "or apply the series' backport to the server's vLLM (the serve step's interpreter):",
        (f"harness patches{flag}", f"harness apply-patches --dist vllm{flag}"),
    )


def _ended_under(line: str, flag: str) -> tuple[str, tuple[str, ...]] | None:
    """The supervisor's own word: the service ended while the step used it."""
    if "while this step used it" not in line:
        return None
    if "stopped (harness stop)" in line:
        return (
            "the server this step talked to was stopped under it by harness stop (with "
            "--force: it refuses a service that live runs use); run the step again -- it "
            "starts the service anew:",
            (f"harness runs{flag}",),
        )
    return (
        "the server this step talked to ended on its own while the step ran; read its log:",
        (f"harness runs{flag}",),
    )


#: (name, rule): a rule takes one server line and the ``-t`` flag, returns (hint, commands)
RULES: tuple[tuple[str, Callable[[str, str], tuple[str, tuple[str, ...]] | None]], ...] = (
    ("fewer hidden states than layer ids (the final layer dropped)", _fewer_states),
    ("the service ended while the step used it", _ended_under),
)


def service_fault(lines: Iterable[str], target: str | None = None) -> ServiceFault | None:
    """The first known fault among the log's ``harness: service`` lines, or None."""
    flag = f" -t {target}" if target else ""
    for raw in lines:
        m = _SERVICE_LINE.match(raw.strip())
        if m is None:
            continue
        for _name, rule in RULES:
            found = rule(m["line"], flag)
            if found is not None:
                return ServiceFault(m["run"], m["line"], found[0], found[1])
    return None
