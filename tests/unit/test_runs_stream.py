"""The follower loop and the views, fed by scripted byte sources (no processes, no SSH).

The real sources (a raw SSH channel, a local pipe) are exercised end to end by the
integration tests; here the loop's own rules are pinned: the copy is written at exact offsets,
a dropped link restarts from the copy's size, login noise before the marker is dropped, and
the views stay bounded whatever the log holds.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harness.cli.screen import LiveView, PlainView
from harness.errors import ConnectError, RunError
from harness.runs.follow.stream import END_MARK, STREAM_MARK, Follower, LocalCopy
from harness.runs.record.models import RunInfo, RunRecord, SupervisorInfo
from harness.targets.base import ByteStream as Source
from harness.targets.base import LinkLost


class Scripted(Source):
    """Serves ``data[offset:]`` in chunks; may drop the link after ``drop_after`` chunks."""

    def __init__(self, data: bytes, offset: int, chunk: int, drop_after: int | None,
                 noise: bytes = b"", reason: str = "finished") -> None:  # fmt: skip
        self.chunks = [noise + STREAM_MARK] + [
            data[i : i + chunk] for i in range(offset, len(data), chunk)
        ]
        self.drop_after = drop_after
        self.sent = 0
        self.size = len(data)
        self.reason = reason

    def read(self, timeout: float) -> tuple[bytes, bool]:
        if self.drop_after is not None and self.sent > self.drop_after:
            raise LinkLost("cable pulled")
        if self.chunks:
            self.sent += 1
            return self.chunks.pop(0), False
        return b"", True

    def stderr(self) -> bytes:
        return END_MARK + json.dumps({"reason": self.reason, "size": self.size}).encode() + b"\n"

    def close(self) -> None:
        pass


DATA = bytes(range(256)) * 4000  # every byte value, invalid UTF-8 included


@pytest.mark.parametrize("drops", [0, 1, 5])
def test_drops_resume_from_the_copy_size_byte_exact(tmp_path: Path, drops: int) -> None:
    copy = LocalCopy(tmp_path / "log")
    opened: list[int] = []
    events: list[str] = []

    def open_stream(offset: int) -> Source:
        opened.append(offset)
        drop = 3 if len(opened) <= drops else None
        return Scripted(DATA, offset, 7919, drop, noise=b"Welcome to the box!\n")

    follower = Follower(
        open_stream, copy, on_link=lambda what, why: events.append(what), tick=0.001
    )
    follower._sleep = lambda s: None  # type: ignore[method-assign]
    end = follower.run()
    assert (tmp_path / "log").read_bytes() == DATA
    assert end.reason == "finished" and end.size == len(DATA)
    assert len(opened) == drops + 1
    assert opened == sorted(opened) and len(set(opened)) == len(opened)  # always moving on
    assert events == ["lost", "back"] * drops  # each drop reported, and each recovery


def test_giving_up_after_the_reconnect_window(tmp_path: Path) -> None:
    def open_stream(offset: int) -> Source:
        raise ConnectError("connection refused by 127.0.0.1:22")

    follower = Follower(open_stream, LocalCopy(tmp_path / "log"), reconnect=0.0)
    with pytest.raises(ConnectError, match="could not reconnect"):
        follower.run()


def test_a_short_stream_is_treated_as_a_drop(tmp_path: Path) -> None:
    class Short(Scripted):
        def stderr(self) -> bytes:  # claims more than it sent
            return END_MARK + json.dumps({"reason": "finished", "size": 10**9}).encode()

    calls = []

    def open_stream(offset: int) -> Source:
        calls.append(offset)
        if len(calls) > 2:
            raise ConnectError("gone")
        return Short(DATA[:100], offset, 10, None)

    follower = Follower(open_stream, LocalCopy(tmp_path / "log"), reconnect=0.05, tick=0.01)
    with pytest.raises(ConnectError):
        follower.run()
    assert calls[:2] == [0, 100]


def test_a_follower_without_end_report_is_an_error(tmp_path: Path) -> None:
    class Mute(Scripted):
        def stderr(self) -> bytes:
            return b"python3: can't open file 'supervisor.py'\n"

    follower = Follower(lambda off: Mute(b"", off, 1, None), LocalCopy(tmp_path / "log"))
    with pytest.raises(RunError, match="can't open file"):
        follower.run()


def test_local_copy_writes_at_offsets_idempotently(tmp_path: Path) -> None:
    a, b = LocalCopy(tmp_path / "log"), LocalCopy(tmp_path / "log")
    a.write_at(0, b"hello ")
    b.write_at(0, b"hello world")  # a second follower of the same run
    a.write_at(6, b"world")
    assert (tmp_path / "log").read_bytes() == b"hello world" and a.size == 11


# -- views -----------------------------------------------------------------------------------


def run_info() -> RunInfo:
    return RunInfo(
        record=RunRecord(id="extract-1", step="extract", argv=("x",), cwd="/"),
        supervisor=SupervisorInfo(pid=1, started_at=100.0),
        supervisor_alive=True,
        observed_at=160.0,
    )


BIG_LOG = (
    b"Loading safetensors checkpoint shards:  45% Completed | 29/64 [00:10<00:12]\n"
    + b"y" * (20 << 20)
    + b"\nbad \xff\xfe\n"
    + b"".join(
        b"\rGenerating hidden states: %d%%|#| %d/100000 [00:01<00:01]" % (i // 1000, i)
        for i in range(100_000)
    )
)


def test_live_view_stays_bounded_and_tracks_the_phase(tmp_path: Path) -> None:
    copy = LocalCopy(tmp_path / "log")
    screen = io.StringIO()
    out = Console(file=screen, force_terminal=True, width=100, color_system=None)
    view = LiveView(run_info(), copy, 0, out)
    held = 0
    step = 999_983  # the copy grows as the follower writes it, cut anywhere
    for pos in range(0, len(BIG_LOG), step):
        copy.write_at(pos, BIG_LOG[pos : pos + step])
        view.pump()
        held = max(held, view.lines.held_chars())
    view.idle()
    status = screen.getvalue()
    view.flush()
    assert view.tracker.phase is not None
    assert view.tracker.phase.name == "extracting hidden states"
    assert view.tracker.phase.done == 99_999
    view.close()
    text = screen.getvalue()
    assert held <= 2 * view.lines.max_chars
    assert len(text) < 2_000_000  # 22 MB of log, a screenful or so of output
    assert "… [+" in text and "bad \ufffd\ufffd" in text
    assert "99999/100000" in text  # the storm's final state, once
    assert "extract-1" in status and "running" in status
    assert view.resume_offset == len(BIG_LOG)


def test_plain_view_passes_text_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = LocalCopy(tmp_path / "log")
    copy.write_at(0, b"caf\xc3")
    sink = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink))
    err = io.StringIO()
    view = PlainView(run_info(), copy, 0, Console(file=err, width=200))
    view.pump()
    assert view.resume_offset == 3  # the split "é" is not shown yet, so not skipped either
    copy.write_at(4, b"\xa9 ok\nModel loading took 1.0 GiB and 2.0 seconds\n")
    view.pump()
    view.flush()
    assert sink.getvalue().decode() == "café ok\nModel loading took 1.0 GiB and 2.0 seconds\n"
    assert "phase: weights loaded" in err.getvalue()
