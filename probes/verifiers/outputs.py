"""Check the small outputs of ``prepare`` and ``vocab`` (speculators 0.3.0), on the target.

``outputs.py prepare --token-freq F``: the token frequencies ``prepare`` writes load, count
some tokens, and none negatively. ``outputs.py vocab --vocab DIR --draft-vocab-size N
--token-freq F``: ``d2t.npy`` maps N draft ids, ``t2d.npy`` marks exactly N target ids, the two
agree (draft id i is target id i + d2t[i], and t2d is true there), and the kept ids are the N
most frequent ones (ties aside), and t2d spans the verifier's vocabulary (``--verifier``, a local
folder's config.json). One ``HARNESS_VERIFY {json}`` line; exit 0 or 1.
"""

import argparse
import json
import sys
from pathlib import Path

MARK = "HARNESS_VERIFY "


def freqs(path: str) -> dict[int, float]:
    import torch

    got = torch.load(path, map_location="cpu", weights_only=False)
    if isinstance(got, dict):
        return {int(k): float(v) for k, v in got.items()}
    return {i: float(v) for i, v in enumerate(got.tolist())}


def prepare(args: argparse.Namespace) -> tuple[list[str], str]:
    if not Path(args.token_freq).is_file():
        return ["token_freq"], f"{args.token_freq} missing"
    f = freqs(args.token_freq)
    bad = [] if f and sum(f.values()) > 0 and min(f.values()) >= 0 else ["token_freq"]
    return bad, f"token frequencies: {len(f)} ids, {sum(f.values()):.0f} tokens counted"


def target_vocab(model: str) -> int | None:
    """The verifier's vocabulary size from its config.json (a text view's, or a wrapper's
    text_config); None for a hub id or a config without one."""
    try:
        cfg = json.loads((Path(model) / "config.json").read_text())
    except (OSError, ValueError):
        return None
    size = cfg.get("vocab_size") or (cfg.get("text_config") or {}).get("vocab_size")
    return int(size) if size else None


def vocab(args: argparse.Namespace) -> tuple[list[str], str]:
    import numpy as np

    folder, n = Path(args.vocab), args.draft_vocab_size
    missing = [x for x in ("d2t.npy", "t2d.npy") if not (folder / x).is_file()]
    if missing:
        return missing, f"{', '.join(missing)} missing in {folder}"
    d2t, t2d = np.load(folder / "d2t.npy"), np.load(folder / "t2d.npy")
    failed: list[str] = []
    kept = np.arange(len(d2t)) + d2t
    if len(d2t) != n:
        failed.append("d2t size")
    size = target_vocab(args.verifier) if args.verifier else None
    if size is not None and len(t2d) != size:
        failed.append(f"t2d covers {len(t2d)} ids, the verifier's vocabulary {size}")
    if int(t2d.sum()) != n or not t2d[kept[(kept >= 0) & (kept < len(t2d))]].all():
        failed.append("t2d")
    f = freqs(args.token_freq) if args.token_freq and Path(args.token_freq).is_file() else {}
    if f and not failed:
        ids = {int(t) for t in kept}
        if len(f) >= n:  # the n most frequent (ties at the floor either way)
            floor = sorted(f.values(), reverse=True)[n - 1]
            wrong = any(f.get(t, 0.0) < floor for t in ids)
        else:  # every seen id, padded with the lowest unseen ids
            wrong = not set(f) <= ids
        if wrong:
            failed.append("not the most frequent")
    return failed, f"{n} draft ids mapped to {len(t2d)} target ids"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("prepare", "vocab"))
    ap.add_argument("--token-freq")
    ap.add_argument("--vocab")
    ap.add_argument("--draft-vocab-size", type=int)
    ap.add_argument("--verifier", help="the folder vocab read the target vocabulary size from")
    args = ap.parse_args()
    failed, detail = (prepare if args.what == "prepare" else vocab)(args)
    line = {"checked": 1, "total": 1, "failed": failed, "unit": "outputs", "detail": detail}
    print(MARK + json.dumps(line), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
