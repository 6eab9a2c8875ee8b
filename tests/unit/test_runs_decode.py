"""Incremental UTF-8, the bounded line buffer and tail offsets: chunking never changes results."""

from __future__ import annotations

import random

import pytest

from harness.runs.follow.decode import Line, LineBuffer, Utf8Decoder, tail_offset

SAMPLES = [
    b"plain ascii\n",
    "naïve café — 日本語 🤖 done\n".encode(),
    b"bad \xff\xfe bytes \xc3 then ok\n",  # invalid and a truncated sequence
    "🤖".encode() * 1000,
    b"\xf0\x9f\xa4",  # a 4-byte sequence cut at the very end
]


def decode_in_chunks(data: bytes, sizes: list[int]) -> tuple[str, int]:
    d = Utf8Decoder()
    out, pos, worst = [], 0, 0
    for n in sizes:
        out.append(d.feed(data[pos : pos + n]))
        worst = max(worst, d.pending)
        pos += n
    out.append(d.feed(data[pos:]))
    out.append(d.flush())
    return "".join(out), worst


@pytest.mark.parametrize("data", SAMPLES, ids=range(len(SAMPLES)))
@pytest.mark.parametrize("seed", range(5))
def test_any_chunking_gives_the_same_text(data: bytes, seed: int) -> None:
    rng = random.Random(seed)
    sizes = [rng.randint(1, 7) for _ in range(len(data))]
    text, worst = decode_in_chunks(data, sizes)
    assert text == data.decode("utf-8", "replace")
    assert worst <= Utf8Decoder.MAX_PENDING


def test_split_sequences_stay_intact_byte_by_byte() -> None:
    data = "é🤖日".encode()
    text, _ = decode_in_chunks(data, [1] * len(data))
    assert text == "é🤖日" and "\ufffd" not in text


def test_invalid_bytes_are_replaced_not_dropped() -> None:
    d = Utf8Decoder()
    assert d.feed(b"a\xffb") == "a\ufffdb"
    assert d.feed(b"\xe6\x97") == "" and d.pending == 2
    assert d.flush() == "\ufffd"


# -- LineBuffer ------------------------------------------------------------------------------

LINES = [
    # (chunks, finished lines, current)
    (["a\nb\n"], ["a", "b"], ""),
    (["par", "tial\nnext"], ["partial"], "next"),
    (["10%\r20%\r30%"], [], "30%"),
    (["10%\r20%\r"], [], "20%"),  # cursor back at column 0, the bar still shows
    (["10%\r20%\r\n"], ["20%"], ""),
    (["\rLoading: 1/4\n\rLoading: 2/4\n"], ["Loading: 1/4", "Loading: 2/4"], ""),
    (["crlf\r\n"], ["crlf"], ""),
    (["", "\n"], [""], ""),
]


@pytest.mark.parametrize(("chunks", "lines", "current"), LINES)
def test_line_buffer_semantics(chunks: list[str], lines: list[str], current: str) -> None:
    buf = LineBuffer()
    got: list[Line] = []
    for c in chunks:
        got += buf.feed(c)
    assert [x.text for x in got] == lines
    assert buf.current == current


def test_a_50mb_line_is_cut_and_counted_in_bounded_memory() -> None:
    buf = LineBuffer(max_chars=100)
    chunk = "x" * (1 << 20)
    for _ in range(50):
        assert buf.feed(chunk) == []
        assert buf.held_chars() <= 2 * 100
    (line,) = buf.feed("tail\n")
    assert line.text == "x" * 100
    assert line.dropped == 50 * (1 << 20) + 4 - 100


def test_a_carriage_return_storm_keeps_only_the_latest_update() -> None:
    buf = LineBuffer(max_chars=100)
    storm = "".join(f"\rprogress {i}/100000" for i in range(100_000))
    for i in range(0, len(storm), 65536):
        assert buf.feed(storm[i : i + 65536]) == []
        assert buf.held_chars() <= 2 * 100
    assert buf.current == "progress 99999/100000"
    assert buf.feed("\n") == [Line("progress 99999/100000")]


def test_too_many_lines_in_one_chunk_are_counted_not_kept() -> None:
    buf = LineBuffer(max_lines=10)
    out = buf.feed("".join(f"{i}\n" for i in range(1000)))
    assert [x.text for x in out] == [str(i) for i in range(990, 1000)]
    assert buf.skipped == 990


# -- tail_offset -----------------------------------------------------------------------------


def reader(data: bytes):  # type: ignore[no-untyped-def]
    return lambda off, n: data[off : off + n]


TAILS = [
    (b"a\nb\nc\n", 2, 2),
    (b"a\nb\nc", 2, 2),
    (b"a\nb\nc\n", 3, 0),
    (b"a\nb\nc\n", 10, 0),
    (b"a\nb\nc\n", 0, 6),
    (b"", 5, 0),
    (b"\n\n\n", 1, 2),
]


@pytest.mark.parametrize(("data", "n", "want"), TAILS)
@pytest.mark.parametrize("block", [1, 2, 64])
def test_tail_offset(data: bytes, n: int, want: int, block: int) -> None:
    assert tail_offset(reader(data), len(data), n, block=block) == want


def test_tail_offset_on_a_big_log_reads_backwards_only_a_little() -> None:
    data = b"".join(b"line %d\n" % i for i in range(200_000))
    reads: list[int] = []

    def read(off: int, n: int) -> bytes:
        reads.append(n)
        return data[off : off + n]

    off = tail_offset(read, len(data), 3, block=4096)
    assert data[off:] == b"line 199997\nline 199998\nline 199999\n"
    assert sum(reads) <= 4096
