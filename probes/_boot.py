# The bootstrap, passed to the target's interpreter with ``-c``.  It must parse and run on
# any Python (even an old one, so it can *say* it is too old), hence no f-strings and no
# annotations.  stdin carries one JSON object on one line: {"modules": [[name, source], ...],
# "main": name, "args": {...}}; with "then": true the run's own arguments follow it (until
# EOF), once the controller has them, and "args" go to the main module's prepare() first.
# stdout gets exactly one marked line with the envelope, so a noisy login script printing
# around it cannot break the parse.
import json
import sys
import traceback
import types

MARK = "\n@@HARNESS-ENVELOPE@@ "
OLDEST = (3, 10)


def _emit(obj):
    # type: (dict[str, object]) -> None
    sys.stdout.write(MARK + json.dumps(obj) + "\n")
    sys.stdout.flush()


def _unchanged(fingerprint):
    # type: (list[tuple[str, int, int]]) -> bool
    """True when every file/folder a cached result was built from is as it was."""
    import os

    for path, mtime, size in fingerprint:
        try:
            st = os.stat(path)
        except OSError:
            if mtime != -1:
                return False
            continue
        if st.st_mtime_ns != mtime or st.st_size != size:
            return False
    return True


def _main():
    # type: () -> None
    if sys.version_info[:2] < OLDEST:
        _emit(
            {
                "ok": False,
                "kind": "python-too-old",
                "error": "Python %d.%d at %s is older than 3.10"  # noqa: UP031 - runs on old Pythons
                % (sys.version_info[0], sys.version_info[1], sys.executable),
                "details": {"version": list(sys.version_info[:3]), "executable": sys.executable},
            }
        )
        return
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]  # the login directory must not shadow installed packages
    # Probes are short-lived and keep every parsed module alive: the cyclic collector would
    # rescan those ASTs again and again (measured: vLLM's 1,342 modules parse in 4.5 s with it
    # off, 19.6 s with it on).
    import gc

    gc.disable()
    stdin = sys.stdin.buffer  # one JSON line; with "then", the run's arguments follow it
    payload = json.loads(stdin.readline().decode("utf-8"))
    warnings = []  # type: list[str]
    if payload.get("fingerprint") and _unchanged(payload["fingerprint"]):
        _emit({"ok": True, "cached": True, "warnings": []})
        return
    try:
        names = [entry[0] for entry in payload["modules"]]
        packages = set(n.rpartition(".")[0] for n in names)
        for entry in payload["modules"]:
            name, source = entry[0], entry[1]
            mod = types.ModuleType(name)
            mod.__file__ = "<harness-probe:" + name + ">"
            if "." not in name or name in packages:
                mod.__path__ = []  # a package, so "from probes.runs import x" works
            sys.modules[name] = mod
            parent, _, leaf = name.rpartition(".")
            if parent:
                setattr(sys.modules[parent], leaf, mod)
            if len(entry) > 2:  # compiled by the controller, which runs this very Python
                import base64
                import marshal

                code = marshal.loads(base64.b64decode(entry[2]))
            else:
                code = compile(source, mod.__file__, "exec")
            exec(code, mod.__dict__)
        main, args = sys.modules[payload["main"]], payload["args"]
        if payload.get("then"):  # start-up done while the controller still gathers them
            if hasattr(main, "prepare"):
                main.prepare(args)
            args = json.loads(stdin.read().decode("utf-8"))
        data = main.run(args, warnings.append)
        finder = sys.modules.get("probes._finder")
        touched = getattr(finder, "TOUCHED", {})
        _emit(
            {
                "ok": True,
                "data": data,
                "warnings": warnings,
                "fingerprint": [[p, m, s] for p, (m, s) in sorted(touched.items())],
            }
        )
    except Exception as exc:
        kind = getattr(exc, "kind", "internal")
        details = getattr(exc, "details", None)
        if isinstance(exc, OSError) and exc.errno == 28:  # ENOSPC: a fact, not a crash
            kind, details = "no-space", {"path": exc.filename}
            where = " that holds %s" % exc.filename if exc.filename else ""  # noqa: UP031
            exc = OSError("no space left on the disk" + where)
        elif isinstance(exc, OSError) and exc.errno in (1, 13, 30):  # EPERM, EACCES, EROFS
            reason = "read-only file system" if exc.errno == 30 else "permission denied"
            kind, details = "not-writable", {"path": exc.filename, "reason": reason}
            exc = OSError("cannot write %s (%s)" % (exc.filename or "a file", reason))  # noqa: UP031
        _emit(
            {
                "ok": False,
                "kind": kind,
                "error": str(exc) or type(exc).__name__,
                "details": details,
                "warnings": warnings,
                "traceback": traceback.format_exc() if kind == "internal" else None,
            }
        )


_main()
