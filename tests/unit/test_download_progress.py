"""The download bar's size reading while pip makes and removes its temporary folders."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from harness.targets.download import _partial_size


def test_partial_size_reads_the_biggest_wheel_anywhere_below(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.whl").write_bytes(b"1" * 300)
    (tmp_path / "y.whl").write_bytes(b"1" * 100)
    (tmp_path / "z.tar.gz").write_bytes(b"1" * 900)  # not a wheel
    assert _partial_size(tmp_path) == 300
    assert _partial_size(tmp_path / "missing") == 0


def test_partial_size_survives_folders_vanishing_mid_walk(tmp_path: Path) -> None:
    """pip's pip-unpack-* folders come and go while the bar polls (a run of the pypi bench
    died on this with FileNotFoundError out of Path.rglob)."""
    stop = threading.Event()

    def churn() -> None:
        i = 0
        while not stop.is_set():
            d = tmp_path / ".tmp" / f"pip-unpack-{i % 3}" / "deep" / "er"
            d.mkdir(parents=True, exist_ok=True)
            (d / "w.whl").write_bytes(b"1")
            shutil.rmtree(tmp_path / ".tmp" / f"pip-unpack-{i % 3}", ignore_errors=True)
            i += 1

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(3000):
            assert _partial_size(tmp_path) in (0, 1)
    finally:
        stop.set()
        worker.join()
