#!/usr/bin/env python3
"""GPU bench of issue 32: speculators 0.9.0 on vLLM's own hidden-state extraction, through harness.

The payload: ``EXTRA_VLLM=0.24.0 bash bench/gpu/pack.sh 0.26.0`` with ``.serve-deps``, ``.spec09``
and ``.ssh-debs`` present here (they go into the pieces), then on the GPU machine ``bash
bench/gpu/stage.sh --install`` (vLLM 0.26.0 in the image's site, vLLM 0.24.0 alone in
``/root/pack/vllm-0.24.0`` behind the wrapper ``/root/vllm-0.24.0-env/bin/python``):

    python3 bench/gpu/serve09.py llama   # the shipped pipelines/speculators-0.9.toml on an
                                         # 8-layer Llama, two environments: prepare (starts
                                         # serve, kept) -> generate (reuses it, stops it) ->
                                         # vocab -> train, each verified; then prefix caching
                                         # turned on over a shared system prompt, with the
                                         # server's own prefix-cache hit rate read from its log
    python3 bench/gpu/serve09.py dsv3    # the 24-layer DeepSeek-V3 shape, final layer 24 asked
                                         # for: vLLM 0.26.0 (has PR 46973), 0.24.0 (before it),
                                         # 0.24.0 + patches/vllm/0.24.0 (the backport), reverted
    python3 bench/gpu/serve09.py dsv3-compiled-a; ... dsv3-compiled-b
                                         # the same with vLLM's defaults (compile + CUDA
                                         # graphs), in two calls on one machine

Every command is harness's, over SSH (``-t gpu``: OpenSSH from ``.ssh-debs`` on 127.0.0.1,
bench/gpu/ssh/up.sh, the kept connection as a user meets it); ``--local`` runs ``-t local``.
The speculators environment is a wrapper interpreter (``/root/spec-env/bin/python``) putting
speculators 0.9.0 and hs-connectors 0.9.0 in front of the image's torch/transformers; vLLM's is
the image's interpreter (or the 0.24.0 wrapper). Verdicts are read from ``harness runs --json``;
harness's own time per step is its wall time less the step's (supervisor clock). Results:
``$OUT/serve09.txt`` (written as they come) and ``$OUT/logs.tar.gz``.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("E2E_WORK", "/root/s09")
os.environ.setdefault("E2E_LOGS", "/root/s09-logs")
os.environ.setdefault("E2E_BUDGET_S", "560")
os.environ.setdefault("VB_BUDGET_S", "570")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import verify_bench as vb

WORK, REPO, OUT, PACK = e2e.WORK, e2e.REPO, e2e.OUT, e2e.PACK
RESULTS = WORK / "results.txt"
vb.RESULTS = RESULTS
PIPE = REPO / "pipelines" / "speculators-0.9.toml"
SPEC_SITE = Path("/root/spec09")
SPEC_PY = Path("/root/spec-env/bin/python")
V24_PY = Path("/root/vllm-0.24.0-env/bin/python")
LLAMA = Path("/root/va/model")
DSV3_OUT = WORK / "dsv3"
STATE = Path("/root/ssh-state")
LOCAL = "--local" in sys.argv
TARGET = "local" if LOCAL else "gpu"
RUNS = WORK / ".harness" / "runs"
#: the container's environment an SSH session does not inherit: passed on through hosts.toml's env
PASS_ENV = (
    "PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "TRITON_CACHE_DIR", "HF_HOME",
    "VLLM_USE_FLASHINFER_SAMPLER",
)  # fmt: skip
OWN: list[tuple[str, float, float]] = []  # (label, wall, step) per harness run


def say(line: str) -> None:
    vb.say(line)
    shutil.copy(RESULTS, OUT / "serve09.txt")


def wheels(name: str) -> list[str]:
    for folder in (PACK / name, REPO / f".{name}"):
        found = sorted(folder.glob("*.whl"))
        if found:
            return [str(p) for p in found]
    return []


def environments() -> None:
    """speculators 0.9.0's environment: its wheels in a folder of their own, in front."""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--target", str(SPEC_SITE), *wheels("spec09")], check=True)  # fmt: skip
    SPEC_PY.parent.mkdir(parents=True, exist_ok=True)
    SPEC_PY.write_text(
        f'#!/bin/sh\nPYTHONPATH={SPEC_SITE}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n'
    )
    SPEC_PY.chmod(0o755)
    ask = (
        "from importlib import metadata as m\n"
        "def v(n):\n try: return m.version(n)\n except m.PackageNotFoundError: return '-'\n"
        "print(*(f'{n} {v(n)}' for n in ('vllm', 'speculators', 'hs-connectors', 'torch', 'transformers')))"
    )
    for py in (SPEC_PY, Path(sys.executable), V24_PY):
        if py.is_file():
            got = subprocess.run([str(py), "-c", ask], capture_output=True, text=True, check=False)
            say(f"environment {py}: {got.stdout.strip() or got.stderr.strip()[-200:]}")


def ssh_up() -> bool:
    """OpenSSH on 127.0.0.1 (bench/gpu/ssh/up.sh), host ``gpu`` with WORK as its workdir."""
    if LOCAL:
        return True
    host_env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "VLLM_LOG_STATS_INTERVAL": "2"}  # fmt: skip
    for k in PASS_ENV:
        if e2e.ENV.get(k):
            host_env[k] = e2e.ENV[k]
    env = {**os.environ, "HOST_PYTHON": sys.executable, "HOST_WORKDIR": str(WORK),
           "HOST_ENV": "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in host_env.items()) + " }"}  # fmt: skip
    debs = PACK / "ssh-debs" if (PACK / "ssh-debs").is_dir() else REPO / ".ssh-debs"
    subprocess.run(["bash", str(REPO / "bench/gpu/ssh/down.sh"), str(STATE)], capture_output=True, check=False)  # fmt: skip
    t0 = time.perf_counter()
    cp = subprocess.run(["bash", str(REPO / "bench/gpu/ssh/up.sh"), str(debs), str(STATE)],
                        env=env, capture_output=True, text=True, check=False)  # fmt: skip
    say(f"sshd on 127.0.0.1 (up.sh): exit {cp.returncode} ({time.perf_counter() - t0:.1f} s)")
    if cp.returncode != 0:
        say("  " + " | ".join((cp.stdout + cp.stderr).strip().splitlines()[-5:]))
        return False
    e2e.ENV["HARNESS_HOSTS"] = str(STATE / "hosts.toml")
    e2e.ENV["HARNESS_SSH_PERSIST"] = "600"
    r = vb.harness("hosts", "--check", "-t", "gpu", name="hosts --check -t gpu", timeout=60)
    say("  " + " | ".join(r.out.strip().splitlines()[-2:])[-300:])
    return r.code == 0


def chat(path: Path, n: int, system: str | None, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(n):
            turns = [] if system is None else [{"from": "system", "value": system}]
            for _ in range(rng.randint(1, 3)):
                human = " ".join(rng.choices(e2e.WORDS, k=rng.randint(10, 40)))
                gpt = " ".join(rng.choices(e2e.WORDS, k=rng.randint(20, 80)))
                turns += [{"from": "human", "value": human}, {"from": "gpt", "value": gpt}]
            f.write(json.dumps({"id": str(i), "conversations": turns}) + "\n")


def sets(model: Path, data: str, layer_ids: str, extra: list[str] | None = None) -> list[str]:
    values = [
        f"model={model}", f"dataset={WORK / (data + '.jsonl')}", f"data={WORK / 'data' / data}",
        f"vllm_python={sys.executable}", f"speculators_python={SPEC_PY}", f"layer_ids={layer_ids}",
        "seq_length=1024", "max_samples=64", "gpu_memory_utilization=0.5", "port=8011",
        "concurrency=16", "draft_vocab_size=256", "epochs=2", "lr=5e-4", "gpus=1",
        f"checkpoints={WORK / 'ckpt' / data}", f"logs={WORK / 'tlogs' / data}",
        *(extra or []),
    ]  # fmt: skip
    return [x for v in values for x in ("--set", v)]


def runs_json() -> list[dict[str, Any]]:
    r = e2e.run(["harness", "runs", "-t", TARGET, "--json"], "runs", quiet=True)
    try:
        got = json.loads(r.out)
    except ValueError:
        return []
    return got if isinstance(got, list) else []


def newest(step: str, since: float = 0.0) -> dict[str, Any] | None:
    """The newest run of ``step`` created at or after ``since`` (an earlier one is not this
    call's: a step refused before launch records nothing)."""
    rows = [x for x in runs_json() if x.get("record", {}).get("step") == step
            and float(x["record"].get("created_at") or 0) >= since - 1]  # fmt: skip
    return max(rows, key=lambda x: x["record"].get("created_at") or 0) if rows else None


def step_seconds(info: dict[str, Any]) -> float | None:
    """The step's own time by its supervisor's clock."""
    run_dir = Path(info["record"].get("run_dir") or "")
    try:
        started = json.loads((run_dir / "supervisor.json").read_text())["started_at"]
        ended = json.loads((run_dir / "status.json").read_text())["ended_at"]
        return float(ended) - float(started)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def step(
    name: str, label: str, args: list[str], timeout: float = 400, expect: str = "verified"
) -> dict[str, Any] | None:
    """``harness run NAME`` on the target; OK when its verdict is what ``expect`` says."""
    since = time.time()
    r = vb.harness(
        "run", name, "-t", TARGET, "--pipeline", str(PIPE), *args, name=label, timeout=timeout
    )
    info = newest(name, since)
    if info is None:
        say(f"  BAD {label}: no run recorded -- {(r.err or r.out).strip()[-900:]}")
        return None
    v = info.get("verification") or {}
    verified = info.get("state") == "succeeded" and v.get("outcome") == "passed"
    failed_check = v.get("outcome") == "failed"
    ok = verified if expect == "verified" else failed_check
    say(f"  {'OK' if ok else 'BAD'} {label}: {info.get('label')} -- harness exit {r.code}")
    if not verified:
        say("    " + " | ".join((r.err or r.out).strip().splitlines()[-6:])[-900:])
    for line in r.err.splitlines():
        if "service serve" in line:
            say(f"    {line.strip()}")
    secs = step_seconds(info)
    if secs is not None:
        OWN.append((label, r.secs, secs))
    return info


def served(pattern: str = r"Prefix cache hit rate: ([\d.]+)%") -> list[str]:
    """The newest serve run's log lines matching ``pattern``, read with ``harness logs``."""
    info = newest("serve")
    if info is None:
        return []
    rid = info["record"]["id"]
    r = e2e.run(["harness", "logs", rid, "-t", TARGET], f"logs {rid}", quiet=True)
    shutil.copy(RESULTS, OUT / "serve09.txt")
    (e2e.LOGS / f"{rid}.log").write_text(r.out)
    return [m.group(0) for m in re.finditer(pattern, r.out)]


def overhead() -> None:
    if not OWN:
        return
    say(
        f"harness's own time per step over {'SSH (-t gpu, kept connection)' if not LOCAL else '-t local'}: wall of `harness run` less the step's own (the check and a needed service's start included where they apply)"
    )
    for label, wall, secs in OWN:
        say(f"  {label:55s} wall {wall:7.1f} s  step {secs:7.1f} s  rest {wall - secs:6.1f} s")
    OWN.clear()


def llama_model() -> Path:
    if (LLAMA / "config.json").is_file():
        return LLAMA
    if not (WORK / "model" / "config.json").is_file():
        e2e.MODEL = WORK / "model"
        e2e.DATA = WORK / "unused.jsonl"
        e2e.build_model()
    return WORK / "model"


IDS = "2, 4, 5, 8"  # launch_vllm.py's choice for 8 layers: [2, L//2, L-3] + the final layer L


def phase_llama(rest: bool = False) -> int:
    """prepare -> generate; then (``rest``: only these, after a call that did the first two)
    vocab -> train, and prefix caching on over a shared system prompt."""
    WORK.mkdir(parents=True, exist_ok=True)
    if not rest or not RESULTS.is_file():
        RESULTS.write_text("")
    say(
        f"# issue 32, llama{' (continued)' if rest else ''}: pipelines/speculators-0.9.toml over {TARGET} on {os.uname().nodename}"
    )
    if not rest or not SPEC_PY.is_file():
        environments()
    if not ssh_up():
        return 1
    model = llama_model()
    if not rest:
        chat(WORK / "chat.jsonl", 64, None, seed=5)
        step(
            "prepare", "prepare (starts serve, kept)", [*sets(model, "chat", IDS), "--keep-service"]
        )
        step("generate", "generate (reuses serve, then stops it)", sets(model, "chat", IDS))
    hits = served()
    say(
        f"    serve log, caching off (default): {hits[-1] if hits else 'no prefix-cache line'} ({len(hits)} stats lines)"
    )
    step("vocab", "vocab", sets(model, "chat", IDS))
    step("train", "train (2 epochs)", sets(model, "chat", IDS), timeout=500)
    overhead()
    # prefix caching on, every sample opening with the same long system prompt
    chat(WORK / "shared.jsonl", 64, " ".join(random.Random(9).choices(e2e.WORDS, k=300)), seed=6)
    cache = ["prefix_caching=--enable-prefix-caching"]
    step(
        "prepare",
        "prepare shared prefix, caching ON",
        [*sets(model, "shared", IDS, cache), "--keep-service"],
    )
    step("generate", "generate shared prefix, caching ON", sets(model, "shared", IDS, cache))
    hits = served()
    rates = [float(h.rsplit(" ", 1)[1].rstrip("%")) for h in hits]
    say(
        f"    serve log, caching ON: prefix-cache hit rate max {max(rates, default=0.0):.1f}% over {len(rates)} stats lines ({', '.join(f'{x:.1f}' for x in rates[-6:])})"
    )
    overhead()
    return 0


def phase_train() -> int:
    """prepare -> generate -> vocab -> train on a fresh machine, speculators' series applied
    before train (torch 2.11's dynamo and 0.9.0's fused loss: patches/speculators/0.9.0)."""
    WORK.mkdir(parents=True, exist_ok=True)
    if not RESULTS.is_file():
        RESULTS.write_text("")
    say(f"# issue 32, llama train chain with patches/speculators/0.9.0, over {TARGET}")
    environments()
    if not ssh_up():
        return 1
    model = llama_model()
    chat(WORK / "chat.jsonl", 64, None, seed=5)
    step("prepare", "prepare (starts serve, kept)", [*sets(model, "chat", IDS), "--keep-service"])
    step("generate", "generate (reuses serve, then stops it)", sets(model, "chat", IDS))
    step("vocab", "vocab", sets(model, "chat", IDS))
    tspec = f"{TARGET}@{SPEC_PY}"
    r = vb.harness(
        "apply-patches",
        "-t",
        tspec,
        "--dist",
        "speculators",
        "--patches",
        str(REPO / "patches"),
        name="apply-patches speculators 0.9.0",
        timeout=120,
    )
    say("  " + " | ".join(r.out.strip().splitlines()[-2:])[-400:])
    step(
        "train",
        "train (2 epochs) with speculators 0.9.0 + 0001",
        sets(model, "chat", IDS),
        timeout=500,
    )
    overhead()
    return 0


def open_phase(title: str, fresh: bool = False) -> bool:
    """The results file (emptied when ``fresh``), the title line, the environments, sshd."""
    WORK.mkdir(parents=True, exist_ok=True)
    if fresh or not RESULTS.is_file():
        RESULTS.write_text("")
    say(title)
    if not SPEC_PY.is_file():
        environments()
    return ssh_up()


def dsv3_model() -> Path:
    """The 24-layer DeepSeek-V3 shape (MLA, 16 routed + 1 shared experts), built on the box."""
    import kimi

    built = kimi.build(DSV3_OUT, text_over=dict(num_hidden_layers=24, n_routed_experts=16))
    return Path(built["text_dir"])


def phase_dsv3() -> int:
    import kimi

    if not open_phase(
        f"# issue 32, dsv3: the final layer on vLLM 0.26.0 / 0.24.0 / 0.24.0 + patches/vllm/0.24.0, over {TARGET}"
    ):
        return 1
    t0 = time.perf_counter()
    built = kimi.build(DSV3_OUT, text_over=dict(num_hidden_layers=24, n_routed_experts=16))
    model = Path(built["text_dir"])
    chat(WORK / "chat-dsv3.jsonl", 64, None, seed=7)
    say(
        f"built the 24-layer DeepSeek-V3 shape (MLA, 16 routed + 1 shared experts; {built['params_text'] / 1e6:.1f} M params) + 64 chats: {time.perf_counter() - t0:.1f} s"
    )
    ids = "2, 12, 21, 24"  # launch_vllm.py for 24 layers: [2, 12, 21] + the final layer 24
    # three server starts in one call: no compile; values at every captured layer, 24 included
    eager = ["enforce_eager=--enforce-eager", "verify_layers=all"]
    # a folder per server: speculators' generate skips every sample whose hs_{i} file exists
    # (it resumes), so a second run into the first one's folder would write nothing
    hs = WORK / "data" / "chat-dsv3"
    base = sets(model, "chat-dsv3", ids, [*eager, f"hidden_states={hs / 'hs-0.26.0'}"])
    v24 = sets(
        model,
        "chat-dsv3",
        ids,
        [*eager, f"vllm_python={V24_PY}", f"hidden_states={hs / 'hs-0.24.0'}"],
    )
    v24p = sets(
        model,
        "chat-dsv3",
        ids,
        [*eager, f"vllm_python={V24_PY}", f"hidden_states={hs / 'hs-0.24.0-0001'}"],
    )
    step("prepare", "dsv3 prepare (vLLM 0.26.0 serve, kept)", [*base, "--keep-service"])
    step("generate", "dsv3 generate on vLLM 0.26.0 (has PR 46973)", base)
    before = step(
        "generate", "dsv3 generate on vLLM 0.24.0 (before PR 46973)", v24, expect="failed"
    )
    if before is not None:  # the words a user meets: the step's failure and its server's lines
        rid = before["record"]["id"]
        r = e2e.run(["harness", "logs", rid, "-t", TARGET], f"logs {rid}", quiet=True)
        (e2e.LOGS / f"{rid}.log").write_text(r.out)
        for line in [x for x in r.out.splitlines() if "harness: service" in x][-6:]:
            say(f"    log: {line.strip()[-400:]}")
        for line in served(r"[^\n]*(?:Error|must match)[^\n]*")[-4:]:
            say(f"    serve log: {line.strip()[-400:]}")
    t24 = f"{TARGET}@{V24_PY}"
    r = vb.harness(
        "apply-patches",
        "-t",
        t24,
        "--dist",
        "vllm",
        "--patches",
        str(REPO / "patches"),
        name="apply-patches vllm 0.24.0",
        timeout=120,
    )
    say("  " + " | ".join(r.out.strip().splitlines()[-3:])[-500:])
    r = vb.harness(
        "check",
        "--step",
        "serve",
        "--pipeline",
        str(PIPE),
        "-t",
        t24,
        *v24,
        name="check --step serve on 0.24.0",
        timeout=120,
    )
    say("  " + (r.out.strip().splitlines() or ["(nothing)"])[-1][-300:])
    step("generate", "dsv3 generate on vLLM 0.24.0 + patch 0001", v24p)
    llama = llama_model()
    if (WORK / "data" / "shared" / "prepared").is_dir() and vb.left() > 150:
        # vLLM issue 44485 was open as of 0.22: the shared-prompt data of the llama phase, caching on, on 0.24.0
        over = [
            "prefix_caching=--enable-prefix-caching",
            "enforce_eager=--enforce-eager",
            f"vllm_python={V24_PY}",
        ]
        step(
            "generate",
            "llama generate shared prefix, caching ON, vLLM 0.24.0 (+0001)",
            sets(llama, "shared", "2, 4, 5, 8", over),
        )
        rates = [float(h.rsplit(" ", 1)[1].rstrip("%")) for h in served()]
        say(
            f"    serve log, caching ON, 0.24.0: prefix-cache hit rate max {max(rates, default=0.0):.1f}% over {len(rates)} stats lines"
        )
    r = vb.harness(
        "revert-patches",
        "-t",
        t24,
        "--dist",
        "vllm",
        "--patches",
        str(REPO / "patches"),
        name="revert-patches vllm 0.24.0",
        timeout=120,
    )
    say("  " + " | ".join(r.out.strip().splitlines()[-2:])[-400:])
    overhead()
    return 0


def phase_dsv3_after() -> int:
    """The DeepSeek-V3 shape on vLLM 0.26.0 alone (a payload without 0.24.0): prepare ->
    generate, values at every captured layer of every sample -- the 'after' of the final
    layer under the position rule that names only a row that is its neighbour."""
    title = f"# issue 32, dsv3-after: vLLM 0.26.0, ids [2, 12, 21, 24], verify_layers=all, over {TARGET}"
    if not open_phase(title):
        return 1
    model = dsv3_model()
    chat(WORK / "chat-dsv3.jsonl", 64, None, seed=7)  # the same 64 chats as the dsv3 phase
    over = ["enforce_eager=--enforce-eager", "verify_layers=all",
            f"hidden_states={WORK / 'data' / 'chat-dsv3' / 'hs-0.26.0-after'}"]  # fmt: skip
    base = sets(model, "chat-dsv3", "2, 12, 21, 24", over)
    step("prepare", "dsv3 prepare (vLLM 0.26.0 serve, kept)", [*base, "--keep-service"])
    step("generate", "dsv3 generate on vLLM 0.26.0, every layer of every sample", base)
    overhead()
    return 0


def phase_dsv3_compiled(part: str) -> int:
    """The DeepSeek-V3 shape with vLLM's defaults (torch.compile + CUDA graphs: no
    ``--enforce-eager``), as a user serves it. ``a``: prepare + generate on 0.26.0, then 0.24.0
    before PR 46973; ``b`` (the next call, same machine): 0.24.0 + patches/vllm/0.24.0/0001,
    reverted after. Two calls: three compiled server starts do not fit one."""
    title = f"# issue 32, dsv3-compiled {part}: vLLM defaults (compile + CUDA graphs), ids [2, 12, 21, 24], verify_layers=all, over {TARGET}"
    if not open_phase(title, fresh=part == "a"):
        return 1
    model = dsv3_model()
    if part == "a":
        chat(WORK / "chat-dsv3.jsonl", 64, None, seed=7)  # the same 64 chats as the dsv3 phase
    hs = WORK / "data" / "chat-dsv3"
    ids = "2, 12, 21, 24"

    def over(folder: str, vllm_py: Path | None = None) -> list[str]:
        extra = ["verify_layers=all", f"hidden_states={hs / folder}"]
        return sets(
            model, "chat-dsv3", ids, extra + ([f"vllm_python={vllm_py}"] if vllm_py else [])
        )

    if part == "a":
        base = over("hs-0.26.0-compiled")
        step("prepare", "dsv3 prepare (vLLM 0.26.0, compiled, kept)", [*base, "--keep-service"], timeout=500)  # fmt: skip
        step("generate", "dsv3 generate on vLLM 0.26.0, compiled", base)
        before = step("generate", "dsv3 generate on vLLM 0.24.0 (before PR 46973), compiled",
                      over("hs-0.24.0-compiled", V24_PY), expect="failed", timeout=500)  # fmt: skip
        if before is not None:
            rid = before["record"]["id"]
            r = e2e.run(["harness", "logs", rid, "-t", TARGET], f"logs {rid}", quiet=True)
            (e2e.LOGS / f"{rid}.log").write_text(r.out)
            for line in [x for x in r.out.splitlines() if "harness: service" in x][-6:]:
                say(f"    log: {line.strip()[-400:]}")
    else:
        t24 = f"{TARGET}@{V24_PY}"
        r = vb.harness("apply-patches", "-t", t24, "--dist", "vllm", "--patches",
                       str(REPO / "patches"), name="apply-patches vllm 0.24.0", timeout=120)  # fmt: skip
        say("  " + " | ".join(r.out.strip().splitlines()[-1:])[-300:])
        step("generate", "dsv3 generate on vLLM 0.24.0 + patch 0001, compiled",
             over("hs-0.24.0-0001-compiled", V24_PY), timeout=500)  # fmt: skip
        r = vb.harness("revert-patches", "-t", t24, "--dist", "vllm", "--patches",
                       str(REPO / "patches"), name="revert-patches vllm 0.24.0", timeout=120)  # fmt: skip
        say("  " + " | ".join(r.out.strip().splitlines()[-2:])[-400:])
    overhead()
    return 0


def phase_cache24() -> int:
    """Prefix caching on vLLM 0.24.0 (vLLM issue 44485 was open as of 0.22), on a fresh machine:
    the Llama, 64 chats opening with one 300-word system prompt, prepare + generate verified."""
    if not open_phase(
        f"# issue 32, cache24: prefix caching ON on vLLM 0.24.0 (unpatched), over {TARGET}"
    ):
        return 1
    model = llama_model()
    chat(WORK / "shared.jsonl", 64, " ".join(random.Random(9).choices(e2e.WORDS, k=300)), seed=6)
    over = [
        "prefix_caching=--enable-prefix-caching",
        "enforce_eager=--enforce-eager",
        f"vllm_python={V24_PY}",
        f"hidden_states={WORK / 'data' / 'shared' / 'hs-0.24.0-cache'}",
    ]
    step(
        "prepare",
        "prepare shared prefix, caching ON, vLLM 0.24.0",
        [*sets(model, "shared", IDS, over), "--keep-service"],
    )
    step(
        "generate",
        "generate shared prefix, caching ON, vLLM 0.24.0",
        sets(model, "shared", IDS, over),
    )
    rates = [float(h.rsplit(" ", 1)[1].rstrip("%")) for h in served()]
    say(
        f"    serve log, caching ON, 0.24.0: prefix-cache hit rate max {max(rates, default=0.0):.1f}% over {len(rates)} stats lines ({', '.join(f'{x:.1f}' for x in rates[-6:])})"
    )
    overhead()
    return 0


HSC_ENV = Path("/root/vllm-hsc-env")  # a venv over the image's vLLM 0.26.0, hs-connectors in it
FP8 = ["kv_connector=FP8HiddenStatesConnector", "hs_backend=fp8",
       "kv_connector_module=hs_connectors.fp8_hidden_states_connector"]  # fmt: skip


def hsc_env() -> Path:
    """A real venv (``--system-site-packages``: the image's vLLM 0.26.0 and torch) with
    hs-connectors 0.9.0 installed in its own site-packages -- where the server imports it."""
    py = HSC_ENV / "bin" / "python"
    if not py.is_file():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(HSC_ENV)], check=True)  # fmt: skip
        site = next(HSC_ENV.glob("lib/python3*/site-packages"))
        # the image's interpreter is itself a venv: --system-site-packages reaches the base
        # Python's site, not the image's (vLLM, torch) -- a .pth puts that one behind ours
        image = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        (site / "image-site.pth").write_text(image + "\n")
        whl = [w for w in wheels("spec09") if "hs_connectors" in w]
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--target", str(site), *whl], check=True)  # fmt: skip
    return py


def phase_fp8() -> int:
    """hs-connectors' FP8 connector inside the vLLM 0.26.0 server (the undeclared coupling, run):
    ``check --step serve`` on the two-environment layout (hs-connectors beside speculators only)
    and on a server environment that has it; then prepare -> generate -> vocab -> train with
    the pipeline's three FP8 settings, the check reading the FP8 files dequantized."""
    if not open_phase(
        f"# issue 32, fp8: hs-connectors' FP8HiddenStatesConnector in the server, over {TARGET}"
    ):
        return 1
    model = llama_model()
    py = hsc_env()
    if not (WORK / "chat.jsonl").is_file():
        chat(WORK / "chat.jsonl", 64, None, seed=5)
    fp8 = [*FP8, f"hidden_states={WORK / 'data' / 'chat' / 'hs-fp8'}"]
    for label, vpy in (("vLLM's env without hs-connectors (the two-environment layout)", sys.executable), ("a server env with hs-connectors", str(py))):  # fmt: skip
        r = vb.harness("check", "--step", "serve", "--pipeline", str(PIPE), "-t", TARGET,
                       *sets(model, "chat", IDS, [*fp8, f"vllm_python={vpy}"]),
                       name=f"check --step serve, FP8, {label}", timeout=120)  # fmt: skip
        lines = [x.strip() for x in r.out.strip().splitlines() if x.strip()]
        say(f"  exit {r.code}: " + " | ".join(lines[-3:])[-600:])
    over = [*fp8, f"vllm_python={py}", "enforce_eager=--enforce-eager"]
    step("prepare", "prepare, FP8 connector (serve kept)", [*sets(model, "chat", IDS, over), "--keep-service"])  # fmt: skip
    step("generate", "generate, FP8 connector", sets(model, "chat", IDS, over))
    step("vocab", "vocab (FP8 run)", sets(model, "chat", IDS, over))
    r = vb.harness("apply-patches", "-t", f"{TARGET}@{SPEC_PY}", "--dist", "speculators",
                   "--patches", str(REPO / "patches"), name="apply-patches speculators 0.9.0",
                   timeout=120)  # fmt: skip
    say("  " + " | ".join(r.out.strip().splitlines()[-2:])[-400:])
    step("train", "train (2 epochs) on the FP8 files, hs_backend=fp8", sets(model, "chat", IDS, over), timeout=500)  # fmt: skip
    overhead()
    return 0


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    phase = next((a for a in sys.argv[1:] if not a.startswith("--")), "llama")
    try:
        phases = {
            "llama": phase_llama,
            "llama-rest": lambda: phase_llama(rest=True),
            "train": phase_train,
            "dsv3": phase_dsv3,
            "cache24": phase_cache24,
            "dsv3-after": phase_dsv3_after,
            "dsv3-compiled-a": lambda: phase_dsv3_compiled("a"),
            "dsv3-compiled-b": lambda: phase_dsv3_compiled("b"),
            "fp8": phase_fp8,
        }
        return phases[phase]()
    finally:
        if not LOCAL:
            e2e.run(["harness", "hosts", "--disconnect", "-t", "gpu"], "disconnect", quiet=True)
        e2e.pack()


if __name__ == "__main__":
    sys.exit(main())
