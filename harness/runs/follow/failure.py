"""A failed step's log tail -> its final exception, the last frames, and what to run next.

Pure. vLLM logs tracebacks from several processes with prefixes (``(VllmWorker TP0 pid=7)``,
``ERROR 01-02 12:00:00 [core.py:1] ``) and often ends with a wrapper (``RuntimeError: Engine core
initialization failed. See root cause above``): the wrapper is kept as the final exception and
the traceback before it becomes its ``root_cause``, which is usually what to fix.

Hints are small rules (:data:`HINTS`, tried in order on the root cause). The one that saves a
model load: a call that no longer binds -- ``TypeError: X() got an unexpected keyword argument
'k'`` / ``missing 1 required positional argument``, or pydantic's ``ValidationError ... for X``
with ``Field required`` / ``Unexpected keyword argument`` (vLLM's configs are pydantic
dataclasses) -- raised from a library frame (site-packages) is an API mismatch between two
installed packages; the summary then names the caller's file:line, ``harness probe
CALLER_MODULE:X`` (follows the caller's import to X's definition, shows its real signature) and
``harness check CALLER_DIST`` (finds every other such call in one pass), with ``-t TARGET``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.runs.follow.service_faults import ServiceFault, service_fault
from harness.runs.record.models import FailureSummary, Frame

#: ``(VllmWorker TP0 pid=123) `` / ``(EngineCore_DP0 pid=9) `` -- vLLM's per-process prefix.
_PROC_PREFIX = re.compile(r"^\((?:[A-Za-z_][\w ]*?)\s+pid=\d+\)\s?")
#: ``[rank0]: `` -- what torch.distributed puts before a child's traceback under torchrun.
_RANK_PREFIX = re.compile(r"^\[rank\d+\]:\s?")
#: ``ERROR 01-02 12:00:00 [file.py:12] `` / ``ERROR 2025-01-02 12:00:00,123 ...`` log prefixes.
_LOG_PREFIX = re.compile(
    r"^(?:\[[^\]]*\]\s*)?(?:ERROR|CRITICAL|WARNING|INFO|DEBUG)\s+"
    r"(?:\d\d-\d\d|\d{4}-\d\d-\d\d)\s+\d\d:\d\d:\d\d(?:[.,]\d+)?\s+(?:\[[^\]]+\]\s?)?"
)
_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$')
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
_CARET = re.compile(r"^\s*[\^~\s]+$")
_CHAIN = ("The above exception was the direct cause", "During handling of the above exception")
_WRAPPERS = re.compile(
    r"See root cause above|Engine core initialization failed|"
    r"Worker failed|WorkerProc initialization failed|died unexpectedly|"
    r"ChildFailedError|Process .* exited with",
    re.I,
)
_UNEXPECTED_KW = re.compile(
    r"(?P<callee>[\w.<>]+)\(\) got an unexpected keyword argument '(?P<kw>\w+)'"
)
_MISSING_ARG = re.compile(
    r"(?P<callee>[\w.<>]+)\(\) missing \d+ required (?:positional |keyword-only )?"
    r"arguments?: (?P<kw>'\w+'(?:,? (?:and )?'\w+')*)"
)
_TOO_MANY = re.compile(
    r"(?P<callee>[\w.<>]+)\(\) takes (?:from )?\d+(?: to \d+)? positional arguments? but \d+"
)
_PYDANTIC_FOR = re.compile(r"\d+ validation errors? for (?P<callee>[\w.]+)")
_PYDANTIC_FIELD = re.compile(r"\[type=(?P<type>missing|unexpected_keyword_argument)\b")
#: frames of these packages sit between a call site and the class it constructs
_PLUMBING = ("pydantic", "pydantic_core", "dataclasses", "typing_extensions")
_LIB_MARKERS = ("/site-packages/", "/dist-packages/")
MAX_FRAMES = 5
MAX_DETAILS = 8


def clean_line(line: str) -> str:
    """Strip vLLM's process prefix, torchrun's rank prefix and a logging prefix from one line."""
    line = line.rstrip("\r")
    line = _PROC_PREFIX.sub("", line, count=1)
    line = _RANK_PREFIX.sub("", line, count=1)
    return _LOG_PREFIX.sub("", line, count=1)


def summarize(
    text: str, target: str | None = None, step: str | None = None
) -> FailureSummary | None:
    """The last exception in ``text`` (a log tail), or ``None`` if it holds no traceback.

    Args:
        text: the end of the log, decoded.
        target: the ``-t`` value to put into suggested commands.
        step: the failed step, to name in a suggested rerun.
    """
    lines = [clean_line(x) for x in text.splitlines()]
    blocks = _tracebacks(lines)
    fault = service_fault(lines, target)
    if not blocks:
        return None if fault is None else _service_cause(fault)
    final = blocks[-1]
    root = None
    if _WRAPPERS.search(final.message) or _WRAPPERS.search(final.exc_type):
        earlier = [b for b in blocks[:-1] if not _WRAPPERS.search(b.message)]
        root = earlier[-1] if earlier else None
    summary = (
        replace(final, root_cause=explain(root, target, step))
        if root is not None
        else explain(final, target, step)
    )
    if fault is None or (summary.root_cause or summary).hint is not None:
        return summary  # no server fault known, or the step's own failure is: its hint stands
    return replace(summary, root_cause=_service_cause(fault))  # a client that saw only 500s


def _service_cause(fault: ServiceFault) -> FailureSummary:
    """The server's known fault as a summary of its own (its line, what it means, what to run)."""
    exc_type, _, message = fault.line.partition(": ")
    return FailureSummary(
        exc_type=f"{exc_type} (service {fault.service})" if message else "service",
        message=message or fault.line,
        hint=fault.hint,
        commands=fault.commands,
    )


def explain(summary: FailureSummary, target: str | None, step: str | None = None) -> FailureSummary:
    """``summary`` with the hint of the first rule in :data:`HINTS` that knows it."""
    for rule in HINTS:
        found = rule.apply(summary, target, step)
        if found is not None:
            return found
    return summary


def _tracebacks(lines: list[str]) -> list[FailureSummary]:
    """Every complete traceback in order (frames + the exception line that ends it)."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != _TRACEBACK:
            i += 1
            continue
        frames: list[Frame] = []
        i += 1
        while i < len(lines):
            m = _FRAME.match(lines[i])
            if m:
                code = None
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                if nxt.startswith("    ") and not _FRAME.match(nxt) and not _CARET.match(nxt):
                    code = nxt.strip()
                    i += 1
                frames.append(Frame(m["file"], int(m["line"]), (m["func"] or "?").strip(), code))
                i += 1
                continue
            line = lines[i]
            if not line.strip() or line.startswith(" ") or _CARET.match(line):
                i += 1  # carets, "..." elisions, exception-group art
                continue
            exc = _EXC.match(line)
            if exc and frames:
                details = []
                for nxt in lines[i + 1 : i + 1 + MAX_DETAILS]:
                    if not nxt.strip() or nxt.strip() == _TRACEBACK or nxt.startswith(_CHAIN):
                        break
                    details.append(nxt.rstrip())
                out.append(
                    FailureSummary(
                        exc_type=exc["type"],
                        message=(exc["msg"] or "").strip(),
                        frames=tuple(frames[-MAX_FRAMES:]),
                        details=tuple(details),
                    )
                )
            break
        i += 1
    return out


def module_of(path: str) -> tuple[str, str] | None:
    """``.../site-packages/vllm/v1/core/x.py`` -> ``("vllm.v1.core.x", "vllm")``; else None."""
    for marker in _LIB_MARKERS:
        idx = path.rfind(marker)
        if idx < 0:
            continue
        rel = path[idx + len(marker) :]
        if not rel.endswith(".py"):
            return None
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or not all(p.isidentifier() for p in parts):
            return None
        return ".".join(parts), parts[0]
    return None


def _call_site(summary: FailureSummary) -> Frame | None:
    """The frame that made the call: the last real one, stepping back over pydantic's and
    dataclasses' own frames (a validated constructor runs inside them)."""
    real = [f for f in summary.frames if not f.file.startswith("<")]
    while real and (module_of(real[-1].file) or ("", ""))[1] in _PLUMBING:
        real.pop()
    return real[-1] if real else None


def _mismatch(
    summary: FailureSummary, target: str | None, callee: str, what: str
) -> FailureSummary:
    """The API-mismatch hint: where the caller calls ``callee``, and how to see it now."""
    callee = re.sub(r"\.(?:__init__|__new__|__call__)$", "", callee)
    site = _call_site(summary)
    where = f" at {site.file}:{site.line}" if site else ""
    lib = module_of(site.file) if site else None
    if lib is None:
        return replace(
            summary,
            hint=f"{callee}() {what}{where}: the installed version of the library that "
            "defines it has a different signature",
            caller=site,
        )
    module, dist = lib
    flag = f" -t {target}" if target else ""
    return replace(
        summary,
        hint=f"{module} ({dist}) calls {callee}(), which {what} in the installed version"
        f"{where}: an API mismatch between installed packages. See what it takes now, and "
        "every other call that no longer binds:",
        commands=(f"harness probe {module}:{callee}{flag}", f"harness check {dist}{flag}"),
        caller=site,
        callee=f"{module}:{callee}",
    )


def _bad_call(
    summary: FailureSummary, target: str | None, step: str | None = None
) -> FailureSummary | None:
    if summary.exc_type.rsplit(".", 1)[-1] != "TypeError":
        return None
    for pattern, what in (
        (_UNEXPECTED_KW, "does not accept '{kw}'"),
        (_MISSING_ARG, "requires {kw}"),
        (_TOO_MANY, "takes fewer positional arguments"),
    ):
        m = pattern.search(summary.message)
        if m is not None:
            kw = m.groupdict().get("kw") or ""
            return _mismatch(summary, target, m["callee"], what.format(kw=kw))
    return None


def _pydantic_call(
    summary: FailureSummary, target: str | None, step: str | None = None
) -> FailureSummary | None:
    """``ValidationError: 1 validation error for SchedulerConfig`` / ``is_encoder_decoder`` /
    ``Field required [type=missing, ...]``: a pydantic-validated constructor that no longer
    binds the call (vLLM's config classes are pydantic dataclasses)."""
    if summary.exc_type.rsplit(".", 1)[-1] != "ValidationError":
        return None
    m = _PYDANTIC_FOR.search(summary.message)
    if m is None:
        return None
    missing: list[str] = []
    unexpected: list[str] = []
    for field, detail in zip(summary.details, summary.details[1:], strict=False):
        kind = _PYDANTIC_FIELD.search(detail)
        if kind and not field.startswith(" "):
            (missing if kind["type"] == "missing" else unexpected).append(field.strip())
    if not missing and not unexpected:
        return None
    what = "; ".join(
        [*(f"requires '{f}'" for f in missing), *(f"does not accept '{f}'" for f in unexpected)]
    )
    return _mismatch(summary, target, m["callee"], what)


def _forked_cuda(
    summary: FailureSummary, target: str | None, step: str | None = None
) -> FailureSummary | None:
    if "Cannot re-initialize CUDA in forked subprocess" not in summary.message:
        return None
    return replace(
        summary,
        hint="the step initialised CUDA before vLLM started its workers, and forked workers "
        "cannot use it: have them spawned -- in pipeline.toml, the step's "
        'env = { VLLM_WORKER_MULTIPROC_METHOD = "spawn" }',
    )


def _unresolved_annotation(
    summary: FailureSummary, target: str | None, step: str | None = None
) -> FailureSummary | None:
    """pydantic cannot resolve a type named in another package's annotations: the caller's
    model inherits from a class of a newer major version than it was written for."""
    if summary.exc_type.rsplit(".", 1)[-1] != "PydanticUndefinedAnnotation":
        return None
    site = _call_site(summary)
    lib = module_of(site.file) if site else None
    dist = lib[1] if lib else "the caller"
    flag = f" -t {target}" if target else ""
    return replace(
        summary,
        hint=f"{dist} builds a pydantic model on classes of another installed package whose "
        f"annotations pydantic cannot resolve ({summary.message}): that package is likely a "
        f"newer major version than {dist} was written for (e.g. transformers 5). A patch "
        "series may carry the fix:",
        commands=(f"harness patches{flag}", f"harness check {dist}{flag}"),
        caller=site,
    )


_WRAPPER_ATTR = re.compile(
    r"'(?P<cls>\w*Config)' object has no attribute '(?P<attr>vocab_size|hidden_size|"
    r"intermediate_size|num_attention_heads|num_key_value_heads|num_hidden_layers|hidden_act|"
    r"max_position_embeddings|rms_norm_eps|initializer_range)'"
)


_REMOTE_CODE = re.compile(r"contains custom code which must be executed")


def _wrapper_config(
    summary: FailureSummary, target: str | None, step: str | None = None
) -> FailureSummary | None:
    """``'Kimi_K25Config' object has no attribute 'vocab_size'`` (transformers 5) or ``... contains
    custom code which must be executed`` (4.x, no ``trust_remote_code``): a multimodal model's
    config keeps the text model's sizes under ``text_config``, and the step read the top level
    without its code (speculators 0.3.0's vocab and train scripts do)."""
    kind = summary.exc_type.rsplit(".", 1)[-1]
    m = _WRAPPER_ATTR.search(summary.message) if kind == "AttributeError" else None
    if m is not None:
        why = f"{m['cls']} has no top-level {m['attr']}: the model is likely a multimodal wrapper"
    elif kind == "ValueError" and _REMOTE_CODE.search(summary.message):
        why = "this step reads the model's config without its custom code; if the model is a "
        why += "multimodal wrapper"
    else:
        return None
    flag = f" -t {target}" if target else ""
    return replace(
        summary,
        hint=f"{why} (its text model under text_config), give the step its text part -- the "
        "shipped pipeline's text-view step writes it, checked -- and read that instead (each "
        "with this run's --set model=...):",
        commands=(
            f"harness run text-view{flag}",
            f"harness run {step or 'STEP'}{flag} --set verifier={{text_view}}",
        ),
        caller=next(  # the frame that read the config: the last one outside transformers
            (
                f
                for f in reversed(summary.frames)
                if (module_of(f.file) or ("", ""))[1] != "transformers"
            ),
            None,
        ),
    )


@dataclass(frozen=True)
class HintRule:
    """One kind of failure a hint is known for; ``apply`` returns None when it is not it."""

    name: str
    apply: Callable[[FailureSummary, str | None, str | None], FailureSummary | None]


HINTS: tuple[HintRule, ...] = (
    HintRule("call no longer binds (TypeError)", _bad_call),
    HintRule("call no longer binds (pydantic)", _pydantic_call),
    HintRule("CUDA in a forked worker", _forked_cuda),
    HintRule("unresolvable annotation (pydantic)", _unresolved_annotation),
    HintRule("a wrapper's config read at the top level", _wrapper_config),
)
