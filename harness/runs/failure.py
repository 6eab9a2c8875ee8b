"""A failed step's log tail -> its final exception, the last frames, and what to run next.

Pure. vLLM logs tracebacks from several processes with prefixes (``(VllmWorker TP0 pid=7)``,
``ERROR 01-02 12:00:00 [core.py:1] ``) and often ends with a wrapper (``RuntimeError: Engine core
initialization failed. See root cause above``): the wrapper is kept as the final exception and
the traceback before it becomes its ``root_cause``, which is usually what to fix.

The one hint that saves a model load: ``TypeError: X() got an unexpected keyword argument 'k'``
raised in a library frame (site-packages) is an API mismatch between two installed packages;
the summary then names ``harness probe CALLER_MODULE:X`` (follows the caller's import to X's
definition, shows its real signature) and ``harness check CALLER_DIST`` (finds every other such
call in one pass), with ``-t TARGET``.
"""

from __future__ import annotations

import re

from harness.runs.models import FailureSummary, Frame

#: ``(VllmWorker TP0 pid=123) `` / ``(EngineCore_DP0 pid=9) `` -- vLLM's per-process prefix.
_PROC_PREFIX = re.compile(r"^\((?:[A-Za-z_][\w ]*?)\s+pid=\d+\)\s?")
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
_LIB_MARKERS = ("/site-packages/", "/dist-packages/")
MAX_FRAMES = 5


def clean_line(line: str) -> str:
    """Strip vLLM's process prefix and a logging prefix from one line."""
    line = line.rstrip("\r")
    line = _PROC_PREFIX.sub("", line, count=1)
    return _LOG_PREFIX.sub("", line, count=1)


def summarize(text: str, target: str | None = None) -> FailureSummary | None:
    """The last exception in ``text`` (a log tail), or ``None`` if it holds no traceback.

    Args:
        text: the end of the log, decoded.
        target: the ``-t`` value to put into suggested commands.
    """
    lines = [clean_line(x) for x in text.splitlines()]
    blocks = _tracebacks(lines)
    if not blocks:
        return None
    final = blocks[-1]
    root = None
    if _WRAPPERS.search(final.message) or _WRAPPERS.search(final.exc_type):
        earlier = [b for b in blocks[:-1] if not _WRAPPERS.search(b.message)]
        root = earlier[-1] if earlier else None
    cause = root or final
    hint, commands = _hint(cause, target)
    if root is not None:
        root = FailureSummary(root.exc_type, root.message, root.frames, None, hint, commands)
        return FailureSummary(final.exc_type, final.message, final.frames, root)
    return FailureSummary(final.exc_type, final.message, final.frames, None, hint, commands)


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
                out.append(
                    FailureSummary(
                        exc_type=exc["type"],
                        message=(exc["msg"] or "").strip(),
                        frames=tuple(frames[-MAX_FRAMES:]),
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


def _hint(summary: FailureSummary, target: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The hint and commands for one exception (only the API-mismatch case has commands)."""
    if summary.exc_type.rsplit(".", 1)[-1] != "TypeError":
        return None, ()
    m = _UNEXPECTED_KW.search(summary.message)
    if m is None:
        return None, ()
    callee = re.sub(r"\.(?:__init__|__new__|__call__)$", "", m["callee"])
    # The call site is the last real file: a dataclass's generated __init__ is "<string>".
    real = [f for f in summary.frames if not f.file.startswith("<")]
    last = real[-1] if real else None
    where = f" at {last.file}:{last.line}" if last else ""
    lib = module_of(last.file) if last else None
    if lib is None:
        return (
            f"{callee}() does not take '{m['kw']}'{where}: the installed version of the "
            "library that defines it has a different signature",
            (),
        )
    module, dist = lib
    flag = f" -t {target}" if target else ""
    return (
        f"{module} ({dist}) calls {callee}() with '{m['kw']}', which the installed "
        f"{callee}() does not accept{where}: an API mismatch between installed packages. "
        "See what it takes now, and every other call that no longer binds:",
        (f"harness probe {module}:{callee}{flag}", f"harness check {dist}{flag}"),
    )
