"""Ship a probe to a target's Python, and read its JSON envelope back defensively.

The probe's source and its arguments travel on stdin as one JSON document; the command line
is a fixed bootstrap, so no user-supplied string (a module name, a path) ever reaches a shell.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from harness.errors import NoSpace, NotWritable, ProbeError, Stopped
from harness.probe_files import boot_source, kept_code, module_path, module_source, probes_dir
from harness.probe_modules import closure, probe_main, probe_names
from harness.targets.base import Target
from harness.targets.no_answer import no_envelope
from harness.targets.shell import NOT_PYTHON_GUARD
from harness.targets.started import EarlyWord, Started, local_python
from harness.targets.waiting import waiting

MARK = b"@@HARNESS-ENVELOPE@@ "


def probe_modules() -> dict[str, tuple[str, ...]]:
    """Each probe's shipped modules (dotted, in load order), by probe name."""
    return {name: shipped(name) for name in probe_names(probes_dir())}


@cache
def shipped(probe: str) -> tuple[str, ...]:
    """One probe's shipped modules from the files it reaches (not all of ``probes/``), kept in
    the cache's ``probe-modules/`` (one table per version of ``probes/``: parsing a check's ~30
    files was ~0.17 s of a 0.65 s warm check). A store that fails only costs the walk."""
    root = probes_dir()
    path = _modules_store(root)
    table: dict[str, list[str]] = {}
    if path is not None:
        try:
            got = json.loads(path.read_text(encoding="utf-8"))
            table = got if isinstance(got, dict) else {}
        except (OSError, ValueError):
            table = {}
        known = table.get(probe)
        if isinstance(known, list) and all(isinstance(m, str) for m in known):
            return tuple(known)
    mods = closure(root, probe_main(root, probe))
    if path is not None:
        table[probe] = list(mods)
        if _write_json(path, table):
            for other in path.parent.glob("probe-modules-*.json"):
                if other != path:  # another version of probes/: never read again
                    other.unlink(missing_ok=True)
    return mods


def _write_json(path: Path, obj: object) -> bool:
    """Whole or not at all (renamed into place); a cache not written is a slower next run.
    ``obj`` as bytes: JSON text already (a probe's envelope line, written as it came)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f".{path.name}.{os.getpid()}")
        part.write_bytes(obj if isinstance(obj, bytes) else json.dumps(obj).encode("utf-8"))
        os.replace(part, path)
    except OSError:
        return False
    return True


@cache
def _modules_store(root: Path) -> Path | None:
    """Where :func:`shipped` keeps its table for these very probe files (and this code)."""
    from harness import probe_modules as walker
    from harness.cache import cache_root

    try:
        files = [*sorted(root.rglob("*.py")), Path(walker.__file__), Path(__file__)]
        stamp = [(str(f), st.st_mtime_ns, st.st_size) for f in files for st in (f.stat(),)]
    except OSError:
        return None
    digest = hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:32]
    return cache_root() / "probe-modules" / f"probe-modules-{digest}.json"


@cache
def _bytecode(module: str) -> str:
    """A probe module compiled by this interpreter, marshalled (base64), from ``__pycache__``:
    a target running this very interpreter skips compiling ~180 KB of probe source per run."""
    import base64
    import marshal
    from importlib.machinery import SourceFileLoader

    path = str(module_path(module))
    kept = kept_code(path)
    if kept is not None:  # the marshalled code as __pycache__ holds it (no load and re-dump)
        return base64.b64encode(kept).decode("ascii")
    # the import system's own loader: it reads (or writes) the module's __pycache__ entry
    code = SourceFileLoader(module, path).get_code(module)
    return base64.b64encode(marshal.dumps(code)).decode("ascii")


def build_payload(
    probe: str,
    args: dict[str, Any],
    fingerprint: tuple[tuple[str, int, int], ...] | None = None,
    *,
    compiled: bool = False,
    then: bool = False,
) -> bytes:
    """Pure: the stdin document for one probe run (``compiled``: bytecode for this Python;
    ``then``: ``args`` are its ``prepare``'s, the run's follow)."""
    mods = shipped(probe)
    doc: dict[str, Any] = {
        "modules": [[m, "", _bytecode(m)] if compiled else [m, module_source(m)] for m in mods],
        "main": mods[-1],
        "args": args,
        **({"then": True} if then else {}),
    }
    if fingerprint:
        doc["fingerprint"] = [list(f) for f in fingerprint]
    return json.dumps(doc).encode()


@dataclass(frozen=True)
class Envelope:
    ok: bool
    data: Any = None
    warnings: tuple[str, ...] = ()
    error: str | None = None
    kind: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    traceback: str | None = None
    cached: bool = False
    fingerprint: tuple[tuple[str, int, int], ...] = ()
    #: the envelope's JSON line as the probe printed it (kept as the result cache's file)
    line: bytes = field(default=b"", repr=False, compare=False)


def _fingerprint(raw: Any) -> tuple[tuple[str, int, int], ...]:
    return tuple((str(p), int(m), int(z)) for p, m, z in raw or ())


def parse_envelope(stdout: bytes) -> Envelope | None:
    """Find the last marked line; anything a login script printed around it is ignored."""
    idx = stdout.rfind(MARK)
    if idx < 0:
        return None
    line = stdout[idx + len(MARK) :].split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "ok" not in obj:
        return None
    return Envelope(
        ok=bool(obj["ok"]),
        data=obj.get("data"),
        warnings=tuple(obj.get("warnings") or ()),
        error=obj.get("error"),
        kind=obj.get("kind"),
        details=obj.get("details") or {},
        traceback=obj.get("traceback"),
        cached=bool(obj.get("cached")),
        fingerprint=_fingerprint(obj.get("fingerprint")),
        line=line,
    )


def _for_target(target: Target, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with the target's import roots and the Python its files are read for."""
    args = dict(args)
    paths = target.probe_paths()
    if paths is not None:
        args["paths"] = paths
    python = target.reads_for_python()
    if python is not None:  # probes/signatures/_platform.target_python
        args["python"] = python
    return args


def start_probe(target: Target, probe: str, args: dict[str, Any]) -> Started | None:
    """``probe`` started on ``target`` with ``args`` for its ``prepare``, its run's arguments
    to follow (:func:`run_probe`'s ``started``); None where it runs elsewhere than here."""
    import sys

    argv = local_python(target)
    if argv is None:
        return None
    doc = build_payload(
        probe, _for_target(target, args), compiled=argv == [sys.executable], then=True
    )
    return Started.start([*argv, "-B", "-c", NOT_PYTHON_GUARD + boot_source()], doc)


def run_probe(
    target: Target,
    probe: str,
    args: dict[str, Any],
    timeout: float | None = None,
    *,
    cache: bool = False,
    meanwhile: Callable[[], object] | None = None,
    early: Callable[[dict[str, Any]], object] | None = None,
    started: Started | None = None,
) -> Envelope:
    """Run one probe on ``target``; raise a domain error unless it answered ``ok``.

    ``timeout``: seconds (default: the target's, see :mod:`harness.targets.timeouts`). A
    probe still running after a few seconds says so on stderr; Ctrl-C ends it on the target.
    ``meanwhile``: called as the probe starts (not for a kept result): work to overlap it.
    ``early``: given what the probe says early (``args["early"]``), in a thread, here only.
    ``started``: :func:`start_probe`'s process for it, given ``args`` (ended if not needed).

    With ``cache``, the result is kept on this machine with the (mtime, size) of every file
    and folder the probe read; the next run sends that fingerprint and the probe answers
    "unchanged" after a few stats instead of parsing again."""
    args = _for_target(target, args)
    store = _ResultCache(target, probe, args) if cache else None
    hit = store.load() if store else None
    if started is not None and hit is not None:  # it has no fingerprint to compare
        started.cancel()
        started = None
    if hit is not None and target.immutable:
        return hit
    import sys

    local = local_python(target)
    word = EarlyWord(early) if early is not None and local is not None else None
    try:
        sent = {**args, "early": word.path} if word is not None else args  # (not in the key)
        # the very interpreter running harness, on this machine: it can take our bytecode
        same, fingerprint = local == [sys.executable], hit.fingerprint if hit else None
        payload = (
            build_payload(probe, sent, fingerprint=fingerprint, compiled=same)
            if started is None
            else json.dumps(args).encode()
        )
        timeout = target.command_timeout if timeout is None else timeout
        if meanwhile is not None:
            meanwhile()
        # the label only once the command is under way: asking it first decides the route
        with waiting(lambda: target.label, f"the {probe} probe", timeout):
            try:
                if started is not None:
                    result = started.finish(payload, timeout)
                else:
                    code = NOT_PYTHON_GUARD + boot_source()
                    result = target.run_python(code, payload, timeout=timeout)
            except KeyboardInterrupt:
                raise Stopped(
                    f"stopped the {probe} probe on {target.label}; its process there was ended"
                ) from None
    finally:
        if word is not None:
            word.stop()
    env = parse_envelope(result.stdout)
    if env is None:
        raise no_envelope(target, result.exit_code, result.stderr)
    if not env.ok:
        if env.kind == "no-space":  # the command says what it left (nothing written, ...)
            where = (env.details or {}).get("path")
            raise NoSpace(f"{target.label}: {env.error}", _hint(env), where)
        if env.kind == "not-writable":
            d = env.details or {}
            raise NotWritable(
                f"{target.label}: {env.error}", _hint(env), d.get("path"), d.get("reason", "")
            )
        raise ProbeError(f"{target.label}: {env.error}", _hint(env))
    if env.cached and hit is not None:
        return hit
    if store is not None:
        store.save(env)
    return env


class _ResultCache:
    """Probe results on this machine, keyed by target, probe, arguments and probe code."""

    def __init__(self, target: Target, probe: str, args: dict[str, Any]) -> None:
        from harness.cache import cache_root

        key = json.dumps(
            [
                target.label,
                target.python_argv(),
                probe,
                args,
                [module_source(m) for m in shipped(probe)],
            ],
            sort_keys=True,
        )
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        self.path = cache_root() / "results" / f"{probe}-{digest}.json"

    def load(self) -> Envelope | None:
        try:
            obj = json.loads(self.path.read_text())
            return Envelope(
                ok=True,
                data=obj["data"],
                warnings=tuple(obj["warnings"]),
                cached=True,
                fingerprint=_fingerprint(obj["fingerprint"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, env: Envelope) -> None:
        if not env.fingerprint:
            return
        if env.line and env.ok and not env.cached:  # has data, warnings and fingerprint
            _write_json(self.path, env.line)  # as it came: no second encoding (~6 ms a check)
            return
        _write_json(
            self.path,
            {
                "data": env.data,
                "warnings": list(env.warnings),
                "fingerprint": [list(f) for f in env.fingerprint],
            },
        )


def _hint(env: Envelope) -> str | None:
    d = env.details
    if env.kind == "python-too-old":
        return "harness needs Python >= 3.10 on the target; point `python =` at a newer one"
    if env.kind == "dist-not-installed":
        searched = ", ".join(d.get("searched") or [])
        sug = d.get("suggestions") or []
        extra = f"; close names: {', '.join(sug)}" if sug else ""
        python = d.get("executable")
        return f"searched {'with ' + str(python) + ': ' if python else ''}{searched}{extra}"
    if env.kind in ("module-not-found", "symbol-not-found"):
        sug = d.get("suggestions") or []
        hint = f"did you mean: {', '.join(sug)}" if sug else None
        if d.get("attribute_of"):
            leaf = str(d.get("module", "")).rsplit(".", 1)[-1]
            hint = f"if {leaf!r} is an attribute, write {d['attribute_of']}:{leaf}" + (
                f"; or did you mean: {', '.join(sug)}" if sug else ""
            )
        if env.kind == "symbol-not-found" and (d.get("dynamic") or d.get("stub")):
            why = (
                ""
                if d.get("stub")
                else (d.get("opaque") or "the module defines __getattr__") + ": "
            )
            hint = (hint + "; " if hint else "") + f"{why}try --live to import it for real"
        return hint
    if env.kind == "import-failed":
        return "the target's traceback ends with:\n" + str(d.get("traceback", "")).rstrip()
    if env.kind == "invalid-source":
        return "the file does not parse under the target's Python; is it the right interpreter?"
    if env.kind == "no-space":
        return "free space on the target (df -h there), then run the command again"
    if env.kind == "bad-manifest":
        path, dist = (d or {}).get("path") or "manifest.json", (d or {}).get("dist") or "DIST"
        return (
            "harness will not guess what it patched: mend the file if you can (is it "
            f"half-written, or edited?); else move it aside (mv {path} {path}.bad) and put "
            f"pip's files back: pip install --force-reinstall --no-deps {dist}==VERSION"
        )
    if env.kind == "not-writable":
        return "run it as the files' owner, or on an environment you can write (a venv)"
    if env.kind == "internal" and env.traceback:
        return "probe crashed; last lines:\n" + "\n".join(env.traceback.strip().splitlines()[-4:])
    return None
