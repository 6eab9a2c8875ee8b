# The probe worker: started once per kept SSH connection with the target's Python, it forks a
# fresh child for every probe, so a probe costs a fork instead of a login shell + interpreter
# start (~0.3 s on a box whose .bashrc runs pyenv). Each child starts from this small process's
# state (nothing but the stdlib below imported), so probes stay as isolated as separate runs.
#
# Wire protocol on stdin/stdout (stdout carries nothing else once READY is printed):
#   request : !IId (code length, stdin length, timeout seconds; 0 = none) + code + stdin
#   reply   : !iII (exit code; -9 on timeout, stdout length, stderr length) + stdout + stderr
# Old-Python-safe syntax on purpose (no f-strings), like the bootstrap.
import contextlib
import io
import os
import select
import signal
import struct
import sys
import time

READY = b"\n@@HARNESS-ZYGOTE-READY@@\n"
IN = sys.stdin.buffer
OUT = sys.stdout.buffer


def _read(n):
    # type: (int) -> bytes
    buf = b""
    while len(buf) < n:
        chunk = IN.read(n - len(buf))
        if not chunk:
            os._exit(0)  # the connection went away: so do we
        buf += chunk
    return buf


def _child(code, data, w):
    # type: (str, bytes, int) -> None
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # subprocesses must never write into the wire
        os.dup2(null, fd)
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    status = 0
    try:
        exec(compile(code, "<harness-probe>", "exec"), {"__name__": "__main__"})
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    o, e = out.getvalue(), err.getvalue()
    view = memoryview(struct.pack("!iII", status, len(o), len(e)) + o + e)
    while view:
        view = view[os.write(w, view) :]
    os._exit(0)


def _serve_one():
    # type: () -> None
    n_code, n_data, timeout = struct.unpack("!IId", _read(16))
    code = _read(n_code).decode("utf-8")
    data = _read(n_data)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(code, data, w)
    os.close(w)
    deadline = time.monotonic() + timeout if timeout > 0 else None
    chunks = []
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([r, IN], [], [], wait)
        if IN in ready:  # nothing may arrive mid-request: the connection went away (Ctrl-C)
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            os._exit(0)
        if not ready:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            chunks = [struct.pack("!iII", -9, 0, 0)]
            break
        chunk = os.read(r, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    reply = b"".join(chunks)
    if len(reply) < 12:  # the child died before answering
        reply = (
            struct.pack("!iII", 1, 0, len(b"probe worker child died")) + b"probe worker child died"
        )
    OUT.write(reply)
    OUT.flush()


def main():
    # type: () -> None
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]
    OUT.write(READY)
    OUT.flush()
    while True:
        _serve_one()


main()
