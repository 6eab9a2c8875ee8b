"""Which phase a vLLM / speculators step is in, recognised from its log lines (pure).

An 18-minute model load looks like a hang unless someone reads the log; this module reads it:
weights loading with ``29/64`` shards, memory profiling, KV cache set-up, CUDA graph capture,
hidden-state batches done/total, tokenisation, training epochs with the step inside the epoch
and the loss (:class:`TrainingProgress`, from speculators' metric lines). Rules are tried in
order on one line; the first match wins. vLLM prefixes worker lines (``(VllmWorker TP0 pid=7)
INFO 01-02 12:00:00 [x.py:1] ...``), so rules search rather than anchor.

:func:`scan` applies the rules to a chunk of text cheaply: one C-speed search for trigger
words, then the rules on only the lines around the last few hits -- so a 100 MB line or a
``\\r`` storm costs a regex pass, not a Python loop per line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.runs.record.models import Phase

_BAR = r":\s+(?P<pct>\d+)%(?:\|[^|\r\n]*\||\s+Completed\s+\|)\s*(?P<done>\d+)/(?P<total>\d+)"


_BAR_NEEDLES = ("%|", "% Completed")


@dataclass(frozen=True)
class Rule:
    """A log line that announces a phase: the plain substrings one such line always holds
    (its ``needles``: the cheap search of :func:`scan` looks for them), the pattern, and the
    phase it makes. :func:`recognise` applies a rule only to a line holding one of its
    needles, so a rule whose needle is wrong fails its own table test instead of passing it
    and never firing on a live log."""

    needles: tuple[str, ...]
    pattern: re.Pattern[str]
    make: Callable[[re.Match[str]], Phase]

    def __post_init__(self) -> None:
        if not self.needles or not all(self.needles):
            raise ValueError(f"a phase rule needs its needles: {self.pattern.pattern}")

    def match(self, line: str) -> re.Match[str] | None:
        if not any(n in line for n in self.needles):
            return None
        return self.pattern.search(line)


def _bar(name: str) -> Callable[[re.Match[str]], Phase]:
    return lambda m: Phase(name, int(m["done"]), int(m["total"]))


def _fixed(name: str, detail: str | None = None) -> Callable[[re.Match[str]], Phase]:
    return lambda m: Phase(name, detail=detail.format(*m.groups()) if detail else None)


RULES: tuple[Rule, ...] = (
    # -- vLLM engine start-up ------------------------------------------------------------------
    Rule(
        ("checkpoint shards",),
        re.compile(
            r"Loading (?:safetensors|pt|bin|npcache)[^:\r\n]*checkpoint shards[^:\r\n]*" + _BAR
        ),
        _bar("loading weights"),
    ),
    Rule(
        ("Loading safetensors",),
        re.compile(r"Loading safetensors using [^:\r\n]+" + _BAR),
        _bar("loading weights"),
    ),
    Rule(
        ("Starting to load model",),
        re.compile(r"Starting to load model (\S+?)(?:\.\.\.)?$"),
        _fixed("loading model", "{}"),
    ),
    Rule(
        ("loading took",),
        re.compile(r"Model loading took ([\d.]+) GiB(?: memory)? and ([\d.]+) seconds"),
        _fixed("weights loaded", "{} GiB in {} s"),
    ),
    Rule(
        ("Loading weights took",),
        re.compile(r"Loading weights took ([\d.]+) seconds"),
        _fixed("weights loaded", "{} s"),
    ),
    Rule(
        ("Memory profiling",),
        re.compile(r"Memory profiling takes ([\d.]+) seconds"),
        _fixed("profiling memory"),
    ),
    Rule(
        ("KV cache",),
        re.compile(r"Available KV cache memory: ([\d.]+ GiB)"),
        _fixed("KV cache", "{} available"),
    ),
    Rule(
        ("KV cache",),
        re.compile(r"GPU KV cache size: ([\d,]+) tokens"),
        _fixed("KV cache", "{} tokens"),
    ),
    Rule(
        ("blocks: ",), re.compile(r"# (?:GPU|CUDA) blocks: (\d+)"), _fixed("KV cache", "{} blocks")
    ),
    Rule(
        ("Maximum concurrency",),
        re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x"),
        _fixed("KV cache", "{1}x concurrency at {0} tokens"),
    ),
    Rule(("KV cache",), re.compile(r"Initializing KV cache on all workers"), _fixed("KV cache")),
    Rule(
        ("CUDA graph",),
        re.compile(r"Capturing CUDA graph[^:\r\n]*" + _BAR),
        _bar("capturing CUDA graphs"),
    ),
    Rule(
        ("Graph capturing",),
        re.compile(r"Graph capturing finished in (\d+) secs"),
        _fixed("CUDA graphs captured", "{} s"),
    ),
    Rule(
        ("init engine",),
        re.compile(r"init engine \(profile, create kv cache, warmup model\) took ([\d.]+) sec"),
        _fixed("engine ready", "start-up took {} s"),
    ),
    # -- speculators: data generation -----------------------------------------------------------
    Rule(
        ("hidden states",),
        re.compile(r"Generating hidden states" + _BAR),
        _bar("extracting hidden states"),
    ),
    Rule(("Saving files",), re.compile(r"Saving files" + _BAR), _bar("saving hidden states")),
    Rule(
        ("hidden states",),
        re.compile(r"Initializing vLLM hidden states generator"),
        _fixed("starting vLLM"),
    ),
    Rule(
        ("Resuming: ",),
        re.compile(r"Resuming: (\d+) files already exist"),
        _fixed("resuming", "{} files done"),
    ),
    Rule(
        ("preprocessing",), re.compile(r"Starting dataset preprocessing"), _fixed("preprocessing")
    ),
    Rule(("Tokeniz",), re.compile(r"Tokenizing and building dataset"), _fixed("tokenising")),
    Rule(
        ("Tokeniz", *_BAR_NEEDLES),
        re.compile(r"(?:Map|Filter|Tokeniz\w*)(?: \(num_proc=\d+\))?" + _BAR),
        _bar("tokenising"),
    ),
    Rule(
        ("token frequency",),
        re.compile(r"Computing token frequency distribution"),
        _fixed("token frequencies"),
    ),
    Rule(("Saved d2t",), re.compile(r"Saved d2t to (\S+)"), _fixed("vocab maps saved", "{}")),
    # -- harness: the step's output check (verify), after a 0 exit --------------------------
    Rule(
        ("harness: verifying",),
        re.compile(r"^harness: verifying the output: "),
        _fixed("verifying the output"),
    ),
    # -- speculators: training ------------------------------------------------------------------
    Rule(
        ("epoch ",),
        re.compile(r"Training epoch (\d+)/(\d+) started"),
        _fixed("training", "epoch {}/{}"),
    ),
    Rule(
        ("epoch ",),
        re.compile(r"Validation epoch (\d+)/(\d+) started"),
        _fixed("validating", "epoch {}/{}"),
    ),
    Rule(
        ("Epoch ",),
        re.compile(r"Epoch (?P<epoch>\d+)" + _BAR),
        lambda m: Phase("training", int(m["done"]), int(m["total"]), f"epoch {m['epoch']}"),
    ),
    # one metrics record per optimiser step / validation epoch (speculators' FormatDictFilter)
    Rule(
        ("train/loss=",),
        re.compile(r"\btrain/loss=(?P<loss>[-+\d.e]+)\b.*?\bepoch=(?P<epoch>\d+)"),
        lambda m: Phase("training", detail=f"epoch {int(m['epoch']) + 1} · loss {m['loss']}"),
    ),
    Rule(
        ("val/loss_epoch=",),
        re.compile(r"\bval/loss_epoch=(?P<loss>[-+\d.e]+)\b.*?\bepoch=(?P<epoch>\d+)"),
        lambda m: Phase("validated", detail=f"epoch {int(m['epoch']) + 1} · val loss {m['loss']}"),
    ),
    # -- any other tqdm bar ---------------------------------------------------------------------
    Rule(
        _BAR_NEEDLES,
        re.compile(r"(?:^|\s|\))(?P<desc>[A-Za-z][^:\r\n]{0,58}?)" + _BAR),
        lambda m: Phase(m["desc"].strip(), int(m["done"]), int(m["total"])),
    ),
)

#: Cheap prefilter: a line can only match a rule if it holds one of these. Plain substrings,
#: found with ``str.rfind`` (C speed, ~GB/s); a regex alternation of the same words runs at
#: ~10 MB/s, slower than a log can arrive. Made from the rules' own needles.
NEEDLES = tuple(dict.fromkeys(n for rule in RULES for n in rule.needles))
_MAX_LINE = 2000


def recognise(line: str) -> Phase | None:
    """The phase one log line announces, or ``None`` if it announces none."""
    for rule in RULES:
        m = rule.match(line)
        if m is not None:
            return rule.make(m)
    return None


def _line_at(text: str, pos: int) -> str:
    """The line around ``pos`` (ends at ``\\n`` or ``\\r``), at most a few KB of it."""
    start = max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1
    ends = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0]
    end = min(ends) if ends else len(text)
    return text[max(start, pos - _MAX_LINE) : min(end, pos + _MAX_LINE)]


def scan(text: str, tries: int = 8) -> Phase | None:
    """The latest phase announced anywhere in ``text`` (a chunk of log), or ``None``.

    For each needle, its last few occurrences are looked at (newest first) until one's line
    is recognised; of those, the one latest in ``text`` wins. Lines end at ``\\n`` or
    ``\\r``, so each update of a progress bar counts as a line.
    """
    best_pos, best = -1, None
    for needle in NEEDLES:
        end = len(text)
        for _ in range(tries):
            pos = text.rfind(needle, 0, end)
            if pos <= best_pos:
                break
            phase = recognise(_line_at(text, pos))
            if phase is not None:
                best_pos, best = pos, phase
                break
            end = pos
    return best


_EPOCH_START = re.compile(r"Training epoch (\d+)/(\d+) started")
_TRAIN_LOSS = re.compile(r"\btrain/loss=([-+\d.e]+)")
_VAL_LOSS = re.compile(r"\bval/loss_epoch=([-+\d.e]+)")
_TRAIN_NEEDLES = ("Training epoch ", "train/loss=", "val/loss_epoch=")


class TrainingProgress:
    """Steps inside the current epoch and the latest losses, counted over every line.

    speculators' progress bar (``tqdm.rich``) draws nothing off a terminal until an epoch
    ends; what does reach the log is one metrics record per optimiser step. Counting those
    gives the step inside the epoch; the previous epoch's count estimates the total (the
    packing sampler varies it by a step or two). Fed every byte in order, found with
    ``str.find`` (C speed), so a burst of log costs no Python loop per line.
    """

    def __init__(self) -> None:
        self.epoch = 0
        self.epochs: int | None = None
        self.step = 0
        self.per_epoch: int | None = None
        self.loss: str | None = None
        self.val_loss: str | None = None
        self._carry = ""

    def feed(self, text: str) -> None:
        text = self._carry + text
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        self._carry = text[cut:][-_MAX_LINE:]
        body = text[:cut]
        hits = sorted(pos for needle in _TRAIN_NEEDLES for pos in _positions(body, needle))
        last_line = -1
        for pos in hits:
            start = max(body.rfind("\n", 0, pos), body.rfind("\r", 0, pos)) + 1
            if start == last_line:
                continue
            last_line = start
            self._line(_line_at(body, pos))
        if "Training epoch " in self._carry:  # a new epoch shows before its line ends
            self._line(self._carry)

    def _line(self, line: str) -> None:
        m = _EPOCH_START.search(line)
        if m:
            if int(m[1]) == self.epoch:  # seen already, before its line was complete
                return
            if self.epoch and self.step:
                self.per_epoch = self.step
            self.epoch, self.epochs, self.step = int(m[1]), int(m[2]), 0
            return
        m = _TRAIN_LOSS.search(line)
        if m:
            self.step += 1
            self.loss = m[1]
            return
        m = _VAL_LOSS.search(line)
        if m:
            self.val_loss = m[1]

    def phase(self, name: str) -> Phase | None:
        if not self.epoch:
            return None
        bits = [f"epoch {self.epoch}/{self.epochs}"]
        if self.loss is not None:
            bits.append(f"loss {self.loss}")
        if self.val_loss is not None:
            bits.append(f"val loss {self.val_loss}")
        total = max(self.per_epoch, self.step) if self.per_epoch else None
        done = self.step if name == "training" else None
        return Phase(name, done, total if done is not None else None, " · ".join(bits))


def _positions(text: str, needle: str) -> list[int]:
    out, pos = [], text.find(needle)
    while pos >= 0:
        out.append(pos)
        pos = text.find(needle, pos + len(needle))
    return out


class PhaseTracker:
    """The current phase of a run, updated as text arrives, at a bounded cost.

    Text is scanned at most every ``interval`` seconds, and only its last ``window``
    characters: at a live log's pace (under ~2.5 MB/s) that is every byte; during a burst or
    the catch-up of a long log, the intermediate phases are skipped and the latest one is
    still found -- so following a log stays fast (> 50 MB/s) whatever it holds. A line cut by
    a chunk boundary is kept for the next scan, so it is recognised once whole.
    """

    def __init__(
        self,
        interval: float = 0.1,
        window: int = 256 * 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.phase: Phase | None = None
        self.training = TrainingProgress()
        self.interval, self.window, self.clock = interval, window, clock
        self._pending = ""
        self._last = float("-inf")

    def update(self, text: str) -> bool:
        """Take ``text``; True when a scan found a new phase *name* (worth printing)."""
        self.training.feed(text)
        if len(text) >= self.window:
            self._pending = text[-self.window :]
        else:
            keep = self.window - len(text)
            self._pending = self._pending[-keep:] + text
        if self.clock() - self._last < self.interval:
            return False
        return self.flush()

    def flush(self) -> bool:
        """Scan what is pending now (the end of a stream)."""
        self._last = self.clock()
        text = self._pending
        cut = max(text.rfind("\n"), text.rfind("\r")) + 1
        self._pending = text[cut:][-_MAX_LINE:]
        found = scan(text)
        if found is None:
            return False
        if found.name in ("training", "validating", "validated"):
            found = self.training.phase(found.name) or found
        changed = self.phase is None or found.name != self.phase.name
        self.phase = found
        return changed
