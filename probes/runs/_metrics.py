"""A served step's progress as its server counts it: the Prometheus text of a service's
``/metrics`` (vLLM's ``vllm:prompt_tokens_total``, ``vllm:num_requests_running`` /
``_waiting``, ``vllm:request_success_total``; names read in vLLM 0.26.0's
``v1/metrics/loggers.py``), so that ``harness runs`` says how fast the server prefills and
how many requests it holds while the files it writes have not landed yet.

Part of the run program (see :mod:`probes.runs.supervisor`), copied into every run directory.
Stdlib only; called from the progress watch (:mod:`probes.runs._fill`).
"""

from __future__ import annotations

#: the series read, and the key each one is summed into (over every label set)
SERIES = {
    "vllm:prompt_tokens_total": "prompt_tokens",
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:request_success_total": "finished",
}
#: seconds one scrape may take (the watch ticks every minute; a hung server must not stall it)
TIMEOUT = 2.0


def parse(text: str) -> dict[str, float]:
    """The series of :data:`SERIES` in Prometheus exposition ``text``, each summed over its
    label sets (one per engine / finish reason); a series absent stays absent."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        end = min((i for i in (line.find("{"), line.find(" ")) if i >= 0), default=len(line))
        key = SERIES.get(line[:end])
        if key is None:
            continue
        rest = line[line.rfind("}") + 1 :] if line[end : end + 1] == "{" else line[end:]
        try:
            out[key] = out.get(key, 0.0) + float(rest.split()[0])
        except (IndexError, ValueError):
            continue
    return out


def scrape(url: str, timeout: float = TIMEOUT) -> dict[str, float] | None:
    """:func:`parse` of ``url``'s body; None when it does not answer 200 with any series (a
    server without metrics: the watch stops asking)."""
    import http.client  # here: a step with no service never imports them
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the target's own port
    try:
        with opener.open(url, timeout=timeout) as r:
            if r.status != 200:
                return None
            got = parse(r.read(4 << 20).decode("utf-8", "replace"))
    except (OSError, ValueError, http.client.HTTPException):
        return None
    return got or None


def load(
    before: dict[str, float] | None, now: dict[str, float], seconds: float
) -> dict[str, float]:
    """What ``progress.json`` keeps under ``server``: requests running / waiting / finished,
    and the prompt tokens per second since ``before`` (the previous scrape)."""
    out: dict[str, float] = {k: int(now[k]) for k in ("running", "waiting", "finished") if k in now}
    if before and "prompt_tokens" in now and "prompt_tokens" in before and seconds > 0:
        out["prompt_tokens_per_s"] = (
            max(0.0, now["prompt_tokens"] - before["prompt_tokens"]) / seconds
        )
    return out


def words(server: dict[str, float]) -> str:
    """`` · server 41,000 prompt tokens/s, 32 running, 180 waiting``."""
    bits = []
    if "prompt_tokens_per_s" in server:
        bits.append(f"{server['prompt_tokens_per_s']:,.0f} prompt tokens/s")
    bits += [f"{server[k]:,} {k}" for k in ("running", "waiting") if k in server]
    return f" · server {', '.join(bits)}" if bits else ""
