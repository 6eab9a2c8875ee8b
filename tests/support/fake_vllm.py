"""A stand-in for ``vllm serve`` with the hidden-states extraction method, stdlib only.

The tests' CPU vLLM environment is the CUDA wheel on CPU torch (config classes only), so the
real ``vllm serve`` cannot run in CI; this speaks the endpoints speculators 0.9.0's client
uses: ``/health``, ``/v1/models`` and ``/v1/completions`` (``max_tokens=1``,
``return_token_ids``), answering each completion with
``kv_transfer_params.hidden_states_path`` -- one ``hs_{n}.safetensors`` file per request,
holding ``token_ids`` (int64 ``[T]``) and ``hidden_states`` (float32 ``[T, layers, hidden]``,
zeros: the values are another test's business).

Switches: ``--startup S`` seconds before it answers ``/health``; ``--exit-before-ready`` (an
error line like vLLM's, exit 1); ``--hang`` (never ready; leaves a worker in a session of its
own that ignores SIGTERM, as engine cores do); ``--die-after N`` (exits after N completions),
``--fail-after N`` (from request N+1: vLLM's engine-core fatal error in its log, then 500s);
``--bind-after S`` (binds its port only after S seconds of "loading", as ``vllm serve``
does); ``--not-http`` (speaks SSH's banner on its port instead of HTTP). ``/metrics`` counts
as vLLM 0.26.0's does (``vllm:prompt_tokens_total``, ``vllm:num_requests_running`` / ``_waiting``,
``vllm:request_success_total``), with ``--no-metrics`` a 404 there.

A smoke server (the served pipeline's ``--smoke``): ``--load-format dummy`` and
``--hf-overrides '{"num_hidden_layers": N}'`` as vLLM takes them, said in its start line;
``--layer-ids 1,2,3,4`` the captured ids (one state each; an id above the model's layer count
fails its start, as vLLM's would); ``--values ramp`` finite states that differ per layer (not
zeros), ``--nan-at N`` a NaN in request N's file.

    python fake_vllm.py --port 8000 --out DIR [--model NAME] [--layers 4] [--hidden 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def safetensors(tensors: dict[str, tuple[str, list[int], bytes]]) -> bytes:
    """The safetensors layout: u64 header length, JSON header, then the raw data."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


#: vLLM 0.24.0's engine core dying at its first DeepSeek step with 4 layer ids (the shape of it)
FATAL = (
    "EngineCore encountered a fatal error.",
    "Traceback (most recent call last):",
    '  File "/opt/vllm/vllm/v1/engine/core.py", line 1224, in run_engine_core',
    "    engine_core.run_busy_loop()",
    "RuntimeError: The expanded size of the tensor (4) must match the existing size (3) at "
    "non-singleton dimension 1.  Target sizes: [65, 4, 7168].  Tensor sizes: [65, 3, 7168]",
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--startup", type=float, default=0.5)
    ap.add_argument("--exit-before-ready", action="store_true")
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--die-after", type=int, default=0)
    ap.add_argument("--fail-after", type=int, default=0)
    ap.add_argument("--bind-after", type=float, default=0.0)
    ap.add_argument("--not-http", action="store_true")
    ap.add_argument("--load-format", default="auto")
    ap.add_argument("--hf-overrides", default="{}")
    ap.add_argument("--layer-ids", default="")
    ap.add_argument("--num-layers", type=int, default=32)
    ap.add_argument("--values", choices=("zeros", "ramp"), default="zeros")
    ap.add_argument("--nan-at", type=int, default=-1)
    ap.add_argument("--no-metrics", action="store_true")
    args = ap.parse_args()
    depth = int(json.loads(args.hf_overrides).get("num_hidden_layers", args.num_layers))
    ids = [int(x) for x in args.layer_ids.replace(",", " ").split()]
    if ids:
        args.layers = len(ids)
        said = f"load_format={args.load_format}, hf_overrides={args.hf_overrides}"
        print(f"INFO: model {args.model}: {depth} layers, {said}, aux hidden state layer ids "
              f"{ids}", flush=True)  # fmt: skip
        if max(ids) > depth:
            print(f"ERROR: ValueError: layer id {max(ids)} is out of range for a model of "
                  f"{depth} layers", flush=True)  # fmt: skip
            return 1
    print(
        f"INFO vllm.entrypoints.openai.api_server: vLLM API server version 0.0.0-standin "
        f"(pid {os.getpid()})",
        flush=True,
    )
    print(
        f"INFO: non-default args: model={args.model!r}, speculative_config="
        "{'method': 'extract_hidden_states'}",
        flush=True,
    )
    if args.exit_before_ready:
        time.sleep(args.startup)
        print(
            "ERROR: ValueError: the extract_hidden_states method needs "
            "--kv_transfer_config with a hidden-states connector",
            flush=True,
        )
        return 1
    if args.not_http:  # another protocol on the port: a banner, then it closes
        import socket

        with socket.create_server(("127.0.0.1", args.port)) as srv:
            print(f"INFO: speaking SSH on {args.port}", flush=True)
            while True:
                conn, _ = srv.accept()
                with conn:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    if args.hang:
        if os.fork() == 0:  # an engine core in a session of its own, deaf to SIGTERM
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                time.sleep(1)
        print("INFO: loading the model ...", flush=True)
        while True:
            time.sleep(1)
    os.makedirs(args.out, exist_ok=True)
    ready_at = time.monotonic() + args.startup
    served = [0]
    counts = {"prompt": 0, "running": 0, "done": 0}  # what /metrics says
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt: str, *a: object) -> None:
            print(f"INFO: {self.address_string()} - {fmt % a}", flush=True)

        def answer(self, code: int, body: object) -> None:
            raw = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if time.monotonic() < ready_at:
                return self.answer(503, {"error": "starting"})
            if self.path == "/health":
                return self.answer(200, {})
            if self.path == "/v1/models":
                return self.answer(200, {"object": "list", "data": [{"id": args.model}]})
            if self.path == "/metrics" and not args.no_metrics:
                return self.metrics()
            return self.answer(404, {"error": self.path})

        def metrics(self) -> None:
            with lock:
                c = dict(counts)
            labels = f'{{engine="0",model_name="{args.model}"}}'
            raw = "\n".join([
                "# TYPE vllm:prompt_tokens_total counter",
                f"vllm:prompt_tokens_total{labels} {float(c['prompt'])}",
                f"vllm:num_requests_running{labels} {float(c['running'])}",
                f"vllm:num_requests_waiting{labels} 0.0",
                f'vllm:request_success_total{{finished_reason="length"}} {float(c["done"])}', "",
            ]).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            with lock:
                counts["running"] += 1
            try:
                self.complete()
            finally:
                with lock:
                    counts["running"] -= 1
                    counts["done"] += 1

        def complete(self) -> None:
            if self.path != "/v1/completions":
                return self.answer(404, {"error": self.path})
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            ids = [int(t) for t in req["prompt"]]
            if req.get("max_tokens") != 1 or not req.get("return_token_ids"):
                return self.answer(400, {"error": "expected max_tokens=1, return_token_ids"})
            with lock:
                n = served[0]
                served[0] += 1
                counts["prompt"] += len(ids)
            if args.fail_after and n >= args.fail_after:  # the engine died: 500s from now on
                if n == args.fail_after:
                    for line in FATAL:
                        print(f"(EngineCore pid={os.getpid()}) ERROR 12-02 10:01:38 [core.py:1233] "
                              f"{line}", flush=True)  # fmt: skip
                return self.answer(500, {"error": "EngineCore encountered an issue"})
            path = os.path.join(args.out, f"hs_{n}.safetensors")
            hs = bytes(4 * len(ids) * args.layers * args.hidden)
            if args.values == "ramp":  # finite, a different value at every layer
                vals = [1.0 + layer + 0.001 * h + 0.01 * t for t in range(len(ids))
                        for layer in range(args.layers) for h in range(args.hidden)]  # fmt: skip
                if n == args.nan_at:
                    vals[0] = float("nan")
                hs = struct.pack(f"<{len(vals)}f", *vals)
            blob = safetensors({
                "token_ids": ("I64", [len(ids)], struct.pack(f"<{len(ids)}q", *ids)),
                "hidden_states": ("F32", [len(ids), args.layers, args.hidden], hs),
            })  # fmt: skip
            with open(path + ".tmp", "wb") as f:
                f.write(blob)
            os.replace(path + ".tmp", path)
            self.answer(200, {
                "id": f"cmpl-{n}", "model": args.model,
                "choices": [{"index": 0, "text": "x", "token_ids": [0], "prompt_token_ids": ids}],
                "kv_transfer_params": {"hidden_states_path": path},
            })  # fmt: skip
            if args.die_after and served[0] >= args.die_after:
                print(f"ERROR: engine core died after {served[0]} request(s)", flush=True)
                os._exit(3)

    if args.bind_after:
        print("INFO: loading the model ...", flush=True)
        time.sleep(args.bind_after)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"INFO: Started server process; listening on http://127.0.0.1:{args.port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.05)
    return 0


if __name__ == "__main__":
    signal.signal(
        signal.SIGTERM, lambda *_: (print("INFO: shutting down", flush=True), sys.exit(0))
    )
    sys.exit(main())
