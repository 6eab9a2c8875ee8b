"""Smoke mode's start-up hook: the same step, same code path, random weights and a few layers.

``harness run STEP --smoke`` writes this file as ``sitecustomize.py`` into a folder of the run
directory and puts that folder first on the step's ``PYTHONPATH``: Python imports it at start,
in the step and in every process it spawns (vLLM's workers), and nowhere else -- no file of
any installed package is touched, and the supervisor deletes the folder when the step ends.
``HARNESS_SMOKE`` (JSON: ``{"layers": N}``) switches it on.

What it changes, once the modules are imported (a post-import hook on ``sys.meta_path``):

* ``transformers``' ``PretrainedConfig.get_config_dict``: the config every caller reads --
  vLLM's ``ModelConfig`` as much as the caller's own ``AutoConfig.from_pretrained`` (which is
  where speculators picks its layer ids from the model's depth) -- says N decoder layers.
  Per-layer lists (``layer_types``...) are cut to match, nested ``text_config`` too, and an MoE
  model keeps its experts: ``first_k_dense_replace`` stays below N so an MoE layer is left.
* ``vllm.config.load.LoadConfig``: ``load_format = "dummy"`` -- vLLM initialises the weights
  at random and reads no checkpoint file, however the caller builds its config (``LLM(...)``,
  ``EngineArgs``, or ``ModelConfig``/``LoadConfig``/``VllmConfig`` directly).

The first process says what it changed in one line (``harness smoke: ...``) on stderr.
Stdlib only; it must never break the step: a failure to patch is said and ignored. Chains to
the ``sitecustomize`` it shadows, if there is one.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from typing import Any

_ENV = "HARNESS_SMOKE"
_SAID = "HARNESS_SMOKE_SAID"
_LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers")
_TARGETS = ("transformers.configuration_utils", "vllm.config.load")


def _settings() -> dict[str, Any] | None:
    raw = os.environ.get(_ENV)
    if not raw:
        return None
    try:
        got = json.loads(raw)
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def cut_config(cfg: dict[str, Any], layers: int) -> list[str]:
    """Cut a config dict (and its ``text_config``) to ``layers`` decoder layers, in place.

    Returns what changed, for the one log line. Pure: a dict in, the same dict changed.
    """
    changes: list[str] = []
    for holder, prefix in ((cfg, ""), (cfg.get("text_config"), "text_config.")):
        if not isinstance(holder, dict):
            continue
        for key in _LAYER_KEYS:
            old = holder.get(key)
            if not isinstance(old, int) or isinstance(old, bool) or old <= layers:
                continue
            holder[key] = layers
            changes.append(f"{prefix}{key} {old} -> {layers}")
            for name, value in list(holder.items()):
                if isinstance(value, list) and len(value) == old:
                    holder[name] = value[:layers]
                    changes.append(f"{prefix}{name} cut to {layers}")
            dense = holder.get("first_k_dense_replace")
            if isinstance(dense, int) and dense >= layers:
                holder["first_k_dense_replace"] = layers - 1
                changes.append(f"{prefix}first_k_dense_replace {dense} -> {layers - 1}")
    return changes


def _say(text: str) -> None:
    if os.environ.get(_SAID):
        return
    os.environ[_SAID] = "1"  # children inherit it: one line per step, not one per worker
    sys.stderr.write(f"harness smoke: {text}\n")
    sys.stderr.flush()


def _patch_transformers(module: Any, layers: int) -> None:
    cls = module.PretrainedConfig
    original = cls.__dict__["get_config_dict"].__func__
    told: set[str] = set()

    def get_config_dict(klass: Any, *args: Any, **kwargs: Any) -> Any:
        config_dict, rest = original(klass, *args, **kwargs)
        changes = cut_config(config_dict, layers) if isinstance(config_dict, dict) else []
        where = str(args[0]) if args else "?"
        if changes and where not in told:
            told.add(where)
            _say(
                f"{config_dict.get('model_type', 'model')} at {where}: {'; '.join(changes)}; "
                "vLLM loads dummy weights (load_format=dummy: no checkpoint file is read); "
                "layer ids picked from the model's depth see the cut depth"
            )
        return config_dict, rest

    cls.get_config_dict = classmethod(get_config_dict)


def _patch_vllm_load(module: Any) -> None:
    cls = module.LoadConfig
    original = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        object.__setattr__(self, "load_format", "dummy")

    cls.__init__ = __init__


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a patch right after a target module executes (a post-import hook)."""

    def __init__(self, patches: dict[str, Any]) -> None:
        self.patches = patches

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        patch = self.patches.get(fullname)
        if patch is None:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            try:
                patch(module)
            except Exception as exc:
                _say(f"could not patch {fullname}: {type(exc).__name__}: {exc}")

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> bool:
    settings = _settings()
    if settings is None:
        return False
    layers = int(settings.get("layers") or 2)
    patches = {
        "transformers.configuration_utils": lambda m: _patch_transformers(m, layers),
        "vllm.config.load": _patch_vllm_load,
    }
    for name, patch in list(patches.items()):
        if name in sys.modules:  # imported before us (unusual): patch it now
            patch(sys.modules[name])
            del patches[name]
    sys.meta_path.insert(0, _AfterImport(patches))
    return True


def _chain() -> None:
    """Run the ``sitecustomize`` this file shadows (a distro's or a venv's), if any."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in sys.path:
        if not folder or os.path.abspath(folder) == here:
            continue
        cand = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(cand):
            import runpy

            runpy.run_path(cand, run_name="sitecustomize")
            return


if __name__ == "sitecustomize":
    install()
    _chain()
