"""A stand-in for speculators 0.9.0's hidden-states client: N completions, one file each.

    python hs_client.py --port 8000 --n 8 [--delay 0.1] [--model NAME] [--output DIR]

Each request sends a sample's token ids (``max_tokens=1``, ``return_token_ids``) and checks
that the ``kv_transfer_params.hidden_states_path`` it gets back exists; exits 1 on the first
request that fails (the server died mid-run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import urllib.request


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--output", default="", help="move each file here, as speculators does")
    args = ap.parse_args()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    base = f"http://127.0.0.1:{args.port}"
    with opener.open(f"{base}/v1/models", timeout=10) as got:
        print("models:", [m["id"] for m in json.load(got)["data"]], flush=True)
    for i in range(args.n):
        body = {"model": args.model, "prompt": list(range(1, 6 + i)), "max_tokens": 1,
                "return_token_ids": True}  # fmt: skip
        req = urllib.request.Request(f"{base}/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})  # fmt: skip
        try:
            with opener.open(req, timeout=30) as got:
                path = json.load(got)["kv_transfer_params"]["hidden_states_path"]
        except OSError as exc:
            print(f"sample {i}: request failed: {exc}", flush=True)
            return 1
        if not os.path.isfile(path):
            print(f"sample {i}: {path} is missing", flush=True)
            return 1
        if args.output:
            os.makedirs(args.output, exist_ok=True)
            moved = os.path.join(args.output, f"hs_{i}.safetensors")
            shutil.move(path, moved)
            path = moved
        print(f"sample {i}: hidden states in {path}", flush=True)
        time.sleep(args.delay)
    return 0


if __name__ == "__main__":
    sys.exit(main())
