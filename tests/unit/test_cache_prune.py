"""``harness cache prune`` chooses by last use and kind. Pure, by table."""

from __future__ import annotations

import pytest

from harness.cache import CacheEntry, Kind, ago, to_prune

NOW = 1_000_000_000.0
DAY = 86400.0


def entry(kind: Kind, name: str, days_ago: float) -> CacheEntry:
    return CacheEntry(kind, name, (f"/c/{name}",), 100, NOW - days_ago * DAY)


ENTRIES = [
    entry(Kind.PYPI, "vllm 0.11.0", 45),
    entry(Kind.PYPI, "vllm 0.16.0", 1),
    entry(Kind.RESULTS, "probe results (9)", 40),
    entry(Kind.RUNS, "gpu/train-1", 90),
    entry(Kind.PARTIAL, ".dl-old", 2),
    entry(Kind.PARTIAL, ".dl-now", 0.001),  # a download running right now
]


@pytest.mark.parametrize(
    ("days", "everything", "runs", "removed"),
    [
        (30, False, False, ["vllm 0.11.0", "probe results (9)", ".dl-old"]),
        (60, False, False, [".dl-old"]),
        (60, False, True, ["gpu/train-1", ".dl-old"]),
        (30, True, False, ["vllm 0.11.0", "vllm 0.16.0", "probe results (9)", "gpu/train-1",
                           ".dl-old"]),
        (0, True, True, ["vllm 0.11.0", "vllm 0.16.0", "probe results (9)", "gpu/train-1",
                         ".dl-old"]),
    ],
)  # fmt: skip
def test_what_a_prune_removes(
    days: float, everything: bool, runs: bool, removed: list[str]
) -> None:
    got = to_prune(ENTRIES, NOW, days, everything=everything, runs=runs)
    assert [e.name for e in got] == removed


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5, "just now"), (61, "1 minute ago"), (7200, "2 hours ago"), (3 * DAY, "3 days ago")],
)
def test_ago(seconds: float, text: str) -> None:
    assert ago(seconds) == text
