"""Probe fidelity: static signatures (``harness probe``, never imports) vs ``inspect.signature``.

Two steps, because the runtime side needs vLLM importable (torch and all), which the check
itself never does:

  record   run with a Python that has vllm==0.16.0 installed with its dependencies; imports
           each module and writes ``bench/fidelity/vllm-0.16.0-inspect.json`` (committed once):
               python bench/probe_fidelity.py record --python /path/to/venv/bin/python
  compare  reads the same modules from the vllm 0.16.0 wheel with the signatures probe and
           prints the agreement, per module and in all:
               python bench/probe_fidelity.py compare [--show N]

The modules are the 20 most imported ones inside vLLM 0.16.0's own source that define public
functions or classes (pure re-export packages like ``vllm.config`` define none). A signature
is compared as its parameters' (name, kind, has-a-default) -- annotation and default *texts*
differ by construction (evaluated objects at run time, source text statically). Counted:
every public function and class defined in the module, and every public method (plus
``__init__``/``__call__``) defined in those classes' bodies. Properties are attributes, not
signatures. A symbol ``inspect`` itself cannot sign (C builtins) is left out of both sides, and
so is a name bound to an object of another name (an alias, or a lambda like fused_moe's CPU
stand-ins: defined by an assignment, not a ``def``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
REFERENCE = REPO / "bench" / "fidelity" / "vllm-0.16.0-inspect.json"
SPEC = "vllm==0.16.0"
COUNT = 20
IMPORT = re.compile(r"^\s*(?:from\s+(vllm(?:\.\w+)*)\s+import|import\s+(vllm(?:\.\w+)*))", re.M)

# Runs inside the vLLM venv: stdlib + the installed packages only.
RECORDER = r"""
import importlib, inspect, json, sys, warnings
warnings.simplefilter("ignore")
KIND = {0: "positional-only", 1: "positional-or-keyword", 2: "var-positional",
        3: "keyword-only", 4: "var-keyword"}

def params(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [[p.name, KIND[int(p.kind)], p.default is not inspect.Parameter.empty]
            for p in sig.parameters.values()]

out = {"python": sys.version.split()[0], "modules": {}}
for name in json.loads(sys.stdin.read()):
    try:
        mod = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        out["modules"][name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        continue
    syms = {}
    for key, obj in vars(mod).items():
        if key.startswith("_") or getattr(obj, "__module__", None) != name:
            continue
        if getattr(obj, "__name__", None) != key:
            continue  # bound under another name (an alias, a lambda): not defined as `key`
        if inspect.isclass(obj):
            syms[key] = params(obj)
            for m, raw in vars(obj).items():
                if m.startswith("_") and m not in ("__init__", "__call__"):
                    continue
                if isinstance(raw, (staticmethod, classmethod)):
                    syms[f"{key}.{m}"] = params(raw.__func__)
                elif inspect.isfunction(raw):
                    syms[f"{key}.{m}"] = params(raw)
        elif inspect.isfunction(obj):
            syms[key] = params(obj)
    out["modules"][name] = {"symbols": syms}
print(json.dumps(out))
"""


def most_imported(root: Path, count: int, defines: set[str]) -> list[str]:
    """The ``count`` vllm modules imported most often by vLLM's own files (ties by name)."""
    seen: Counter[str] = Counter()
    for path in root.rglob("*.py"):
        for m in IMPORT.finditer(path.read_text(encoding="utf-8", errors="replace")):
            seen[m.group(1) or m.group(2)] += 1
    ranked = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    return [name for name, _ in ranked if name in defines][:count]


def static_symbols(module: str) -> dict[str, list[list[object]] | None]:
    from harness.probing import run_probe
    from harness.targets.pypi import PypiTarget

    with PypiTarget(SPEC) as t:
        data = run_probe(t, "signatures", {"module": module, "qualname": None}).data
    out: dict[str, list[list[object]] | None] = {}

    def sig(s: dict) -> list[list[object]] | None:
        ps = s.get("parameters")
        if ps is None:
            return None
        return [[p["name"], p["kind"], p["default"] is not None] for p in ps]

    for s in data.get("symbols") or []:
        if s["kind"] not in ("class", "function"):
            continue
        out[s["qualname"]] = sig(s)
        for m in s.get("members") or []:
            leaf = m["qualname"].rsplit(".", 1)[-1]
            if m["kind"] in ("class", "property"):
                continue
            if leaf.startswith("_") and leaf not in ("__init__", "__call__"):
                continue
            out[m["qualname"]] = sig(m)
    return out


def candidates() -> tuple[Path, list[str]]:
    from harness.targets.pypi import PypiTarget

    root = Path(PypiTarget(SPEC).probe_paths()[0])
    mods = set()
    for path in (root / "vllm").rglob("*.py"):
        rel = path.relative_to(root).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        text = path.read_text(encoding="utf-8", errors="replace")
        if re.search(r"^(?:class|def|async def) [A-Za-z]", text, re.M):
            mods.add(name)
    return root, most_imported(root / "vllm", COUNT, mods)


def record(python: str) -> None:
    _, modules = candidates()
    cp = subprocess.run(
        [python, "-c", RECORDER],
        input=json.dumps(modules),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    data = json.loads(cp.stdout.strip().splitlines()[-1])
    data["vllm"] = SPEC
    data["order"] = modules
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(modules)} modules with Python {data['python']} -> {REFERENCE}")


def compare(show: int) -> float:
    ref = json.loads(REFERENCE.read_text())
    total = same = 0
    misses: list[str] = []
    print(f"{'module':58} {'equal':>6} {'of':>5}")
    for module in ref["order"]:
        entry = ref["modules"][module]
        if "error" in entry:
            print(f"{module:58} import failed at recording: {entry['error'][:60]}")
            continue
        runtime = entry["symbols"]
        static = static_symbols(module)
        n = ok = 0
        for name, want in sorted(runtime.items()):
            if want is None:
                continue  # inspect cannot sign it either
            n += 1
            got = static.get(name)
            if got == want:
                ok += 1
            else:
                misses.append(f"{module}:{name}\n    static  {got}\n    runtime {want}")
        total, same = total + n, same + ok
        print(f"{module:58} {ok:>6} {n:>5}")
    pct = 100.0 * same / total if total else 0.0
    print(f"\nall: {same}/{total} = {pct:.2f}% equal (target >= 99.5%)")
    for m in misses[:show]:
        print(m)
    return pct


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--python", required=True, help="a Python with vllm==0.16.0 installed")
    c = sub.add_parser("compare")
    c.add_argument("--show", type=int, default=20, help="print this many mismatches")
    opts = ap.parse_args()
    if opts.cmd == "record":
        record(opts.python)
    else:
        compare(opts.show)


if __name__ == "__main__":
    main()
