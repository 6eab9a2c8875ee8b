"""Probe: facts about the target interpreter and machine, cheap enough for every command.

args: {"dists": ["torch", ...], "paths": [...] | null, "prepend": [...] | null, "gpus": bool,
"names": bool} (``names``: also every installed dist, as ``installed``)
``prepend``: folders in front of the import path, as a step's ``PYTHONPATH`` puts them.
Versions are read from ``*.dist-info/METADATA`` as text: importing torch to ask its version
would cost seconds and initialise CUDA.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from probes._finder import Dists, Finder, default_paths

DEFAULT_DISTS = ["torch", "vllm", "speculators", "transformers"]
GPU_QUERY = "index,name,memory.total,memory.used,memory.free,driver_version"


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    paths = args.get("paths") or default_paths()
    front = [p for p in args.get("prepend") or [] if os.path.isdir(p)]
    paths = [*front, *(p for p in paths if p not in front)]
    dists = Dists(Finder(paths))
    wanted = list(dict.fromkeys([*DEFAULT_DISTS, *(args.get("dists") or [])]))
    return {
        "python": {
            "executable": sys.executable,
            "version": ".".join(map(str, sys.version_info[:3])),
            "implementation": platform.python_implementation(),
            "prefix": sys.prefix,
            "in_venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        },
        "site_packages": [p for p in paths if p.endswith(("site-packages", "dist-packages"))]
        or [sysconfig.get_paths().get("purelib", "")],
        "paths": paths,
        "platform": {
            "system": platform.system(),
            "machine": platform.machine(),
            "hostname": platform.node(),
        },
        "dists": {d: dists.version_of(d) for d in wanted},
        "gpus": gpus(warn) if args.get("gpus", True) else None,
        "installed": names(dists, paths) if args.get("names") else None,
    }


def names(dists: Dists, paths: list[str]) -> dict[str, str]:
    """Every installed dist's name -> version, from the dist-info folders' names (no reads)."""
    out: dict[str, str] = {}
    for root in paths:
        for entry in dists.infos(root):
            name, _, version = entry[: -len(".dist-info")].partition("-")
            out.setdefault(name, version)
    return out


def gpus(warn: Callable[[str], None]) -> dict[str, Any]:
    """GPUs from ``nvidia-smi`` (free memory each), or why there are none."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {"available": False, "reason": "nvidia-smi not found", "devices": []}
    try:
        cp = subprocess.run(
            [exe, f"--query-gpu={GPU_QUERY}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        warn(f"nvidia-smi failed: {exc}")
        return {"available": False, "reason": f"nvidia-smi failed: {exc}", "devices": []}
    if cp.returncode != 0:
        msg = (cp.stderr or cp.stdout).strip().splitlines()
        return {
            "available": False,
            "reason": msg[-1] if msg else "nvidia-smi failed",
            "devices": [],
        }
    devices = parse_gpu_csv(cp.stdout)
    if not devices:
        return {"available": False, "reason": "nvidia-smi lists no GPU", "devices": []}
    return {"available": True, "reason": None, "devices": devices}


def parse_gpu_csv(text: str) -> list[dict[str, Any]]:
    """Pure: nvidia-smi's csv rows -> dicts; unparseable numbers become None."""
    out = []
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 6:
            continue

        def num(s: str) -> int | None:
            try:
                return int(float(s))
            except ValueError:
                return None

        out.append(
            {
                "index": num(cells[0]),
                "name": cells[1],
                "memory_total_mib": num(cells[2]),
                "memory_used_mib": num(cells[3]),
                "memory_free_mib": num(cells[4]),
                "driver": cells[5],
            }
        )
    return out


if __name__ == "__main__":  # pragma: no cover - manual use on a box
    import json

    print(json.dumps(run({}, lambda m: None), indent=2))
    os._exit(0)
