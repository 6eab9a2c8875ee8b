"""The pipeline's frozen models: steps as declared, and one step resolved for a launch.

:mod:`.pipeline` reads ``pipeline.toml`` into these; :mod:`.resolve` turns a step and its
parameters into a :class:`ResolvedStep`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.runs.record.parts import ServiceRecord
from harness.targets import shell

PIPELINE_FILENAME = "pipeline.toml"
PIPELINE_ENV_VAR = "HARNESS_PIPELINE"
#: Filled in by harness at launch; a file may use them but not define them.
BUILTINS = (
    "workdir", "python", "run_id", "run_dir", "step", "smoke_dir", "smoke_layers", "verifiers",
    # a step spread over hosts (``spread``): which node this is; 0 / 1 on one host
    "shard", "num_shards", "node_rank", "nnodes", "head",
)  # fmt: skip
SPREADS = ("shard", "torchrun", "ray")
#: The throwaway folder a smoke run's outputs go to (``<run_dir>/smoke``).
SMOKE_DIR = "smoke_dir"
#: Where the run directory holds harness's own output checks (``probes/verifiers/``).
VERIFIERS = "verifiers"
#: How long a step's output check may take unless its ``verify.timeout`` says otherwise.
VERIFY_TIMEOUT = 3600.0
#: A parameter name.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: ``{name}``, or an escaped brace.
PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


@dataclass(frozen=True)
class SmokeSpec:
    """How a step runs in smoke mode (``[steps.NAME.smoke]``).

    ``samples``: the parameter that takes ``--smoke-samples``; ``layers``: the fewest decoder
    layers the step's own logic stays valid with (speculators picks ``[2, L//2, L-3, L-1]``);
    ``params``: overrides, which must send every output to ``{smoke_dir}``.

    ``args``: appended to the command in smoke mode (``{smoke_layers}`` is the cut): a step
    that cuts its model itself -- ``vllm serve --load-format dummy --hf-overrides ...`` --
    gets no start-up hook. ``layer_ids``: the parameter holding captured layer ids, mapped
    onto the cut model (:func:`harness.runs.pipeline.smoke.map_layer_ids`).
    """

    samples: str | None = None
    layers: int = 1
    params: Mapping[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    layer_ids: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "samples": self.samples,
            "layers": self.layers,
            "params": dict(self.params),
        }
        if self.args:  # only when declared: an entry without them digests as before
            out["args"] = list(self.args)
        if self.layer_ids is not None:
            out["layer_ids"] = self.layer_ids
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SmokeSpec:
        return cls(
            d.get("samples"),
            int(d.get("layers") or 1),
            dict(d.get("params") or {}),
            tuple(d.get("args") or ()),
            d.get("layer_ids"),
        )


@dataclass(frozen=True)
class VerifySpec:
    """How a step's output is checked (``[steps.NAME.verify]``), run on the target by the
    supervisor once the step exits 0, with the step's parameters, environment and cwd.

    ``command``: the check of a real run; ``smoke``: the one a ``--smoke`` run gets (random
    weights: it needs no reference), empty when smoke runs have none; ``timeout`` in seconds.
    The check exits 0 (passed) or 1 (failed) and may print one ``HARNESS_VERIFY {json}`` line
    (:mod:`harness.runs.record.verification`).
    """

    command: tuple[str, ...]
    smoke: tuple[str, ...] = ()
    timeout: float = VERIFY_TIMEOUT

    def to_dict(self) -> dict[str, Any]:
        return {"command": list(self.command), "smoke": list(self.smoke), "timeout": self.timeout}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VerifySpec:
        return cls(
            tuple(d.get("command") or ()),
            tuple(d.get("smoke") or ()),
            float(d.get("timeout") or VERIFY_TIMEOUT),
        )


#: How long a service may take to answer its health URL unless ``ready_timeout`` says.
READY_TIMEOUT = 1800.0
#: a ready service no run used within this many minutes stops itself (``unclaimed_minutes``)
UNCLAIMED_MINUTES = 10.0


@dataclass(frozen=True)
class ServiceSpec:
    """A step that serves (``service = { port = "{port}", health = "/health" }``): started
    detached like any step, ready once ``health`` answers 200 -- a path on the target's
    ``127.0.0.1:port``, or a whole ``http://`` URL -- within ``ready_timeout`` seconds; the
    steps that ``needs`` it wait for that, and stop it when they end (unless kept)."""

    port: str
    health: str = "/health"
    ready_timeout: float = READY_TIMEOUT
    unclaimed_minutes: float = UNCLAIMED_MINUTES

    def to_dict(self) -> dict[str, Any]:
        out = {"port": self.port, "health": self.health, "ready_timeout": self.ready_timeout}
        if self.unclaimed_minutes != UNCLAIMED_MINUTES:  # the entry's digest as before if unset
            out["unclaimed_minutes"] = self.unclaimed_minutes
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServiceSpec:
        return cls(
            str(d["port"]),
            str(d.get("health") or "/health"),
            float(d.get("ready_timeout") or READY_TIMEOUT),
            float(d.get("unclaimed_minutes") or UNCLAIMED_MINUTES),
        )


@dataclass(frozen=True)
class Step:
    name: str
    command: tuple[str, ...] | str  # a string only when shell is true
    shell: bool = False
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    help: str = ""
    #: dist -> version specifier the step's imports must see (``transformers = ">=4.56,<5"``)
    requires: Mapping[str, str] = field(default_factory=dict)
    #: caller dist -> the callees whose APIs this step exercises (``()``: every callee the
    #: caller imports); ``None``: not declared, so the review checks every dist with a series
    checks: Mapping[str, tuple[str, ...]] | None = None
    smoke: SmokeSpec | None = None
    #: how the step runs over several hosts: "shard", "torchrun" or "ray" (None: one host)
    spread: str | None = None
    nproc: str = "1"  # torchrun's --nproc-per-node (placeholders allowed: "{gpus}")
    port: int | None = None  # rendezvous (torchrun, default 29500) / Ray GCS (default 6379)
    verify: VerifySpec | None = None
    #: dist -> the versions this step's environment is known to work with (``harness matrix``,
    #: runs): the review says whether the environment is in them; no gate
    known_good: Mapping[str, str] = field(default_factory=dict)
    #: a server the steps that need it wait for (None: an ordinary step)
    service: ServiceSpec | None = None
    #: the service steps this one talks to: started (or a live one reused) before it
    needs: tuple[str, ...] = ()
    #: the interpreter this step runs in, when not the target's (``{python}`` means it)
    python: str | None = None
    #: what the step will write, counted before it starts (``disk = {...}``: templates)
    disk: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        # service, needs and python only when declared: an entry that declares none digests
        # (entry_digest) as it did before they existed, so its verified runs still count
        extra: dict[str, Any] = {}
        if self.service is not None:
            extra["service"] = self.service.to_dict()
        if self.needs:
            extra["needs"] = list(self.needs)
        if self.python is not None:
            extra["python"] = self.python
        if self.disk is not None:
            extra["disk"] = dict(self.disk)
        return {
            **extra,
            "name": self.name,
            "command": self.command if isinstance(self.command, str) else list(self.command),
            "shell": self.shell,
            "cwd": self.cwd,
            "env": dict(self.env),
            "params": dict(self.params),
            "help": self.help,
            "requires": dict(self.requires),
            "checks": None if self.checks is None else {c: list(v) for c, v in self.checks.items()},
            "smoke": None if self.smoke is None else self.smoke.to_dict(),
            "spread": self.spread,
            "nproc": self.nproc,
            "port": self.port,
            "verify": None if self.verify is None else self.verify.to_dict(),
            **({"known_good": dict(self.known_good)} if self.known_good else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        cmd = d["command"]
        return cls(
            name=d["name"],
            command=cmd if isinstance(cmd, str) else tuple(cmd),
            shell=bool(d.get("shell")),
            cwd=d.get("cwd"),
            env=dict(d.get("env") or {}),
            params=dict(d.get("params") or {}),
            help=d.get("help") or "",
            requires=dict(d.get("requires") or {}),
            checks=None
            if d.get("checks") is None
            else {c: tuple(v) for c, v in d["checks"].items()},
            smoke=SmokeSpec.from_dict(d["smoke"]) if d.get("smoke") else None,
            spread=d.get("spread"),
            nproc=str(d.get("nproc") or "1"),
            port=d.get("port"),
            verify=VerifySpec.from_dict(d["verify"]) if d.get("verify") else None,
            known_good=dict(d.get("known_good") or {}),
            service=ServiceSpec.from_dict(d["service"]) if d.get("service") else None,
            needs=tuple(d.get("needs") or ()),
            python=d.get("python"),
            disk=dict(d["disk"]) if d.get("disk") else None,
        )


@dataclass(frozen=True)
class Pipeline:
    """A whole pipeline file. ``lines`` maps dotted keys to their line, for error messages."""

    path: str
    params: Mapping[str, str]
    steps: Mapping[str, Step]
    lines: Mapping[str, int] = field(default_factory=dict, compare=False)

    def where(self, *key: str) -> str:
        dotted = ".".join(key)
        line = self.lines.get(dotted)
        while line is None and len(key) > 1:
            key = key[:-1]
            line = self.lines.get(".".join(key))
        return f"{self.path}:{line or 1}: {dotted}"

    def entry_digest(self, step: str) -> str:
        """A digest of what defines ``step`` here (its entry and the pipeline's parameters):
        a verified run vouches for the entry it ran."""
        import hashlib
        import json

        entry = {"step": self.steps[step].to_dict(), "params": dict(self.params)}
        return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "params": dict(self.params),
            "steps": {n: s.to_dict() for n, s in self.steps.items()},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Pipeline:
        return cls(
            path=d["path"],
            params=dict(d.get("params") or {}),
            steps={n: Step.from_dict(s) for n, s in (d.get("steps") or {}).items()},
        )


@dataclass(frozen=True)
class ResolvedStep:
    """What will run: argv (``/bin/sh -c TEXT`` for a shell step), cwd, env additions."""

    step: str
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str]
    params: Mapping[str, str]
    shell: bool = False
    #: the output check to run after the step exits 0 (empty: none declared), its time limit
    verify: tuple[str, ...] = ()
    verify_timeout: float = VERIFY_TIMEOUT
    #: a service step's settings, resolved
    service: ServiceRecord | None = None
    #: the step's own interpreter (``python = ...``), when it declares one
    python: str | None = None
    #: the disk budget's inputs, resolved (``disk = {...}``), when it declares one
    disk: Mapping[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "service": None if self.service is None else self.service.to_dict(),
            "python": self.python,
            **({"disk": dict(self.disk)} if self.disk else {}),
            "step": self.step,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "params": dict(self.params),
            "shell": self.shell,
            "verify": list(self.verify),
            "verify_timeout": self.verify_timeout,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ResolvedStep:
        return cls(
            step=d["step"],
            argv=tuple(d["argv"]),
            cwd=d["cwd"],
            env=dict(d.get("env") or {}),
            params=dict(d.get("params") or {}),
            shell=bool(d.get("shell")),
            verify=tuple(d.get("verify") or ()),
            verify_timeout=float(d.get("verify_timeout") or VERIFY_TIMEOUT),
            service=ServiceRecord.from_dict(d["service"]) if d.get("service") else None,
            python=d.get("python"),
            disk=dict(d["disk"]) if d.get("disk") else None,
        )

    def secrets(self) -> list[str]:
        """Values to mask wherever this step is printed: those of secret-looking env vars.

        Parameters are not masked by name (``token_freq`` is no secret); secrets belong in
        ``env`` -- the host's in hosts.toml or the step's -- and are masked wherever their
        value appears, the command line included.
        """
        return shell.secrets_in(self.env)

    def display(self) -> str:
        """The command as one line, secrets masked (for messages and run.json)."""
        text = self.argv[2] if self.shell and len(self.argv) == 3 else shell.join(self.argv)
        return shell.mask(text, self.secrets())


# -- finding and loading -------------------------------------------------------------------
