"""Reading pip's words (download size, versions on the index, nearest versions). Pure."""

from __future__ import annotations

import pytest

from harness.targets.pipout import (
    downloading,
    latest,
    nearest,
    versions_from_error,
    versions_from_index,
)

VLLM = [f"0.{m}.{p}" for m in range(8, 17) for p in range(3)]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("  Downloading vllm-0.16.0-cp38-abi3-manylinux_2_31_x86_64.whl (400.9 MB)",
         ("vllm-0.16.0-cp38-abi3-manylinux_2_31_x86_64.whl", 400_900_000)),
        ("Downloading https://x/files/six-1.16.0-py2.py3-none-any.whl (11 kB)",
         ("six-1.16.0-py2.py3-none-any.whl", 11_000)),
        ("  Downloading tiny-1.0-py3-none-any.whl (812 bytes)", ("tiny-1.0-py3-none-any.whl", 812)),
        ("Collecting vllm==0.16.0", None),
        ("  Using cached vllm-0.16.0-cp38-abi3-manylinux_2_31_x86_64.whl (400.9 MB)", None),
    ],
)  # fmt: skip
def test_downloading_line(line: str, want: tuple[str, int] | None) -> None:
    assert downloading(line) == want


def test_versions_from_pips_error() -> None:
    err = (
        "ERROR: Could not find a version that satisfies the requirement x==9 "
        "(from versions: 0.1.0, 0.2.0)\nERROR: No matching distribution found for x==9\n"
    )
    assert versions_from_error(err) == ["0.1.0", "0.2.0"]
    assert versions_from_error("... (from versions: none)") == []
    assert versions_from_error("ERROR: network unreachable") is None


def test_versions_from_pip_index() -> None:
    out = "vllm (0.16.0)\nAvailable versions: 0.16.0, 0.15.1, 0.15.0\n"
    assert versions_from_index(out) == ["0.16.0", "0.15.1", "0.15.0"]
    assert versions_from_index("WARNING: no index") is None


@pytest.mark.parametrize(
    ("wanted", "want"),
    [
        ("0.13.5", ["0.13.1", "0.13.2", "0.14.0", "0.14.1"]),
        ("0.99.0", ["0.16.1", "0.16.2"]),  # past the newest: the two newest
        ("0.1.0", ["0.8.0", "0.8.1"]),  # before the oldest: the two oldest
        ("not-a-version", ["0.16.1", "0.16.2"]),
    ],
)
def test_nearest_versions(wanted: str, want: list[str]) -> None:
    assert nearest(wanted, VLLM) == want


def test_latest_prefers_a_release() -> None:
    assert latest(["1.0.0", "2.0.0rc1", "1.5.0"]) == "1.5.0"
    assert latest(["2.0.0rc1"]) == "2.0.0rc1"
    assert latest([]) is None
