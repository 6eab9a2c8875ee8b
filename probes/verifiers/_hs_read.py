"""Extracted hidden states, one sample at a time, in either format, streamed.

* speculators 0.3.0: ``data_{i}.pt`` (``input_ids`` [n], ``hidden_states``: a list of
  [n, hidden], one per captured layer in layer order -- the worker captures each distinct id
  once, speculators keeps them in a frozenset); the layer ids in ``data_config.json``.
* speculators 0.9.0: ``hs_{i}.safetensors`` (``token_ids`` [n], ``hidden_states``
  [n, layers, hidden]); the layer ids are not in the files: ``--layer-ids`` names them, in
  the order vLLM captures them. hs-connectors' ``FP8HiddenStatesConnector`` writes
  ``hidden_states`` as float8_e4m3fn with ``hidden_states_scales`` [n, 1, 1] (one float32 scale
  per token over all layers): its states are read dequantized (fp8 x scale, as its own reader
  ``FP8Transfer`` does), so the values are compared, not the fp8 codes.

A :class:`Sample` holds what every check needs (ids, how many layers, their rows, a
duplicated pair) read memory-mapped, and only the layers asked for in memory. :func:`stream`
loads samples in a background thread, a few ahead, while the caller forwards the previous
ones: never the whole dataset in memory.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = {"data_": ".pt", "hs_": ".safetensors"}
#: hs-connectors' FP8 files: one float32 scale per token (``hs_connectors/fp8_utils.py``)
SCALES = "hidden_states_scales"


@dataclass
class Sample:
    index: int
    name: str
    ids: Any = None  # a 1-D LongTensor
    held: int = 0  # how many layers the file holds
    rows: list[int] = field(default_factory=list)  # rows per held layer
    dup: tuple[int, int] | None = None  # positions of two bit-identical layers
    states: dict[int, Any] = field(default_factory=dict)  # position -> [n, hidden], in memory
    prepared: Any = None  # the prepared dataset's ids for this index (list), when asked
    fp8: bool = False  # stored as float8 with per-token scales (hs-connectors' FP8 connector)
    error: str | None = None  # "missing", "cannot be read: ..."
    stats: list[Any] = field(default_factory=list[Any])  # _hs_stats.profile of every held layer


class Since:
    """The step's start, to tell a file it wrote from one kept from an earlier run.

    ``mark``: a file the supervisor stamped just before the step started. Its mtime comes
    from the same clock as the outputs' when it is on their filesystem -- the kernel's coarse
    file clock, or a file server's -- where ``time.time()`` is finer, or another machine's:
    files the step had just written read as older than its start. On another filesystem
    nothing is said; ``time`` (seconds) is for a check run by hand with no mark."""

    def __init__(self, time: float | None, mark: str | None) -> None:
        self.time, self.mark = time, mark

    def cut(self, data: Path) -> int | None:
        """The start in the outputs' file clock (ns), or None: not comparable."""
        if self.mark is None:
            return None if self.time is None else int(self.time * 1e9)
        try:
            stamp = Path(self.mark).stat()
            same = stamp.st_dev == data.stat().st_dev
        except OSError:
            return None
        return stamp.st_mtime_ns if same else None


class Folder:
    """The extracted files of one folder: which format, which indices, which layer ids."""

    def __init__(self, data: Path, layer_ids: str | None = None) -> None:
        self.data = data
        self.prefix, self.paths = "data_", {}
        for prefix, ext in FORMATS.items():
            found = {}
            for f in data.glob(f"{prefix}*{ext}"):
                tail = f.name[len(prefix) : -len(ext)]
                if tail.isdigit():
                    found[int(tail)] = f
            if found:
                self.prefix, self.paths = prefix, found
                break
        self.total = max(self.paths) + 1 if self.paths else 0
        self.layer_ids = self._layer_ids(layer_ids)

    def kept(self, since: Since | float | None) -> tuple[int, int] | None:
        """(files last written before ``since``, files): outputs the step did not write --
        a step that resumes (speculators' generate) skips what exists. None: unknown."""
        if isinstance(since, float):
            since = Since(since, None)
        cut = since.cut(self.data) if since is not None else None
        if cut is None:
            return None
        older = 0
        for path in self.paths.values():
            with contextlib.suppress(OSError):  # gone since the listing: its own check says so
                older += path.stat().st_mtime_ns < cut
        return older, len(self.paths)

    def _layer_ids(self, given: str | None) -> list[int]:
        if given:
            ids = [int(x) for x in given.split(",") if x.strip()]
            return sorted(set(ids)) if self.prefix == "data_" else list(dict.fromkeys(ids))
        if self.prefix == "hs_":
            raise SystemExit(f"{self.data}: hs_*.safetensors files do not name their layers: "
                             "give --layer-ids (e.g. 2,16,29,32)")  # fmt: skip
        cfg = json.loads((self.data / "data_config.json").read_text())
        for holder in (cfg.get("hidden_states") or {}, cfg):
            if isinstance(holder, dict) and holder.get("layer_ids"):
                return sorted({int(x) for x in holder["layer_ids"]})
        raise SystemExit(f"{self.data}/data_config.json names no layer_ids")

    def name(self, index: int) -> str:
        return f"{self.prefix}{index}"

    def load(self, index: int, positions: list[int], torch: Any) -> Sample:
        """Sample ``index`` with the held layers at ``positions`` in memory."""
        s = Sample(index, self.name(index))
        path = self.paths.get(index)
        if path is None:
            s.error = "missing"
            return s
        try:
            (_load_pt if self.prefix == "data_" else _load_st)(path, s, positions, torch)
        except Exception as exc:  # a cut or garbled file: this sample's failure, not a crash
            s.error = f"cannot be read: {type(exc).__name__}: {str(exc)[:160]}"
            s.states = {}
        return s


def _load_pt(path: Path, s: Sample, positions: list[int], torch: Any) -> None:
    d = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
    s.ids, hs = d["input_ids"], list(d["hidden_states"])
    s.held, s.rows = len(hs), [int(h.shape[0]) for h in hs]
    s.dup = _duplicated([h[:1] for h in hs], lambda a, b: torch.equal(hs[a], hs[b]), torch)
    s.states = {p: hs[p].clone() for p in positions if p < len(hs)}  # read from the map now


def _load_st(path: Path, s: Sample, positions: list[int], torch: Any) -> None:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        s.ids = f.get_tensor("token_ids")
        sl = f.get_slice("hidden_states")
        shape = list(sl.get_shape())
        if len(shape) != 3:
            raise ValueError(f"hidden_states is {shape}, not [n, layers, hidden]")
        n, s.held = shape[0], shape[1]
        s.rows = [n] * s.held
        scales = f.get_tensor(SCALES) if SCALES in f.keys() else None  # noqa: SIM118 (safe_open has no __contains__)
        s.fp8 = scales is not None
        if scales is not None and tuple(scales.shape) != (n, 1, 1):
            raise ValueError(f"{SCALES} is {list(scales.shape)}, not [{n}, 1, 1]")

        def raw(t: Any) -> Any:  # torch.equal has no float8 kernel: compare the bytes
            return t.view(torch.uint8) if t.element_size() == 1 and t.is_floating_point() else t

        # the layers wanted: one read of the whole tensor, each layer a view of it (slicing
        # layer by layer gathers the file's rows once per layer: ~1.5x the time, 8B-sized)
        whole = f.get_tensor("hidden_states") if positions else None
        first = sl[0:1] if n else None
        heads = [raw(first[:, j]) for j in range(s.held)] if first is not None else []

        def same(a: int, b: int) -> bool:
            if whole is not None:
                return bool(torch.equal(raw(whole[:, a]), raw(whole[:, b])))
            return bool(torch.equal(raw(sl[:, a : a + 1]), raw(sl[:, b : b + 1])))

        def layer(p: int) -> Any:
            assert whole is not None  # read whenever a layer is wanted
            x = whole[:, p]  # a view: the caller keeps (copies) the layers it compares
            return x if scales is None else x.float() * scales[:, 0].float()

        s.dup = _duplicated(heads, same, torch)
        s.states = {p: layer(p) for p in positions if p < s.held}


def _duplicated(
    heads: list[Any], same: Callable[[int, int], bool], torch: Any
) -> tuple[Any, ...] | None:
    """The first pair of held layers that are bit-identical: their first rows compared (one
    page each), then the whole layers for a pair whose first rows agree."""
    for b in range(1, len(heads)):
        for a in range(b):
            if heads[a].numel() and torch.equal(heads[a], heads[b]) and same(a, b):
                return (a, b)
    return None


class Prepared:
    """The prepared dataset (``datasets.save_to_disk``): its ``input_ids`` row by row, read
    lazily from the Arrow files (never the whole column in memory)."""

    def __init__(self, path: str) -> None:
        from datasets import load_from_disk

        self.ds = load_from_disk(path).with_format(None)  # rows as lists, whatever it was saved as
        if "input_ids" not in self.ds.column_names:
            raise SystemExit(f"{path}: the prepared dataset has no input_ids column "
                             f"({self.ds.column_names})")  # fmt: skip

    def __len__(self) -> int:
        return len(self.ds)

    def ids(self, index: int) -> list[int] | None:
        if index >= len(self.ds):
            return None
        return [int(x) for x in self.ds[index]["input_ids"]]


def stream(load: Callable[[int], Sample], indices: Iterable[int], depth: int) -> Iterator[Sample]:
    """``load(i)`` for each index, in a background thread at most ``depth`` ahead."""
    q: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
    done = object()

    def work() -> None:
        try:
            for i in indices:
                q.put(load(i))
        except BaseException as exc:  # handed to the reader, raised there
            q.put(exc)
        q.put(done)

    threading.Thread(target=work, daemon=True, name="hs-prefetch").start()
    while True:
        got = q.get()
        if got is done:
            return
        if isinstance(got, BaseException):
            raise got
        yield got
