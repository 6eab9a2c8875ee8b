"""The pure parts of lazy wheels (issue 26): which byte spans to fetch, where the directory is,
and the RECORD check that a lazily fetched folder passes before it is published."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from harness.errors import TargetError
from harness.targets.lazywheel import GAP, _directory, plan
from harness.targets.unpack import check_record, member_kind


def _info(name: str, offset: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.header_offset = offset
    return info


def _keep(name: str) -> bool:
    return member_kind(name) == "keep"


def test_spans_run_from_a_header_to_the_next_and_near_neighbours_merge() -> None:
    infos = [
        _info("pkg/a.py", 0),
        _info("pkg/b.py", 100),
        _info("pkg/_c.so", 200),  # compiled: its name only, never its bytes
        _info("pkg/d.py", 200 + GAP + 1),
        _info("pkg/e.py", 300 + GAP + 1),
        _info("pkg-1.dist-info/METADATA", 400 + GAP + 1),
    ]
    far = 400 + 3 * GAP
    infos.append(_info("pkg/blob.bin", far))
    infos.append(_info("pkg/z.pyi", far + GAP + 10))  # a blob wider than GAP before it
    directory = far + GAP + 50
    assert plan(infos, directory, _keep) == [
        (0, 199),  # a.py and b.py, up to the compiled module's header
        (200 + GAP + 1, far - 1),  # d.py, e.py and METADATA, up to the blob
        (far + GAP + 10, directory - 1),  # z.pyi, up to the central directory
    ]


def test_nothing_wanted_is_nothing_fetched() -> None:
    assert plan([_info("a/x.so", 0), _info("a/y.bin", 10)], 20, _keep) == []


def test_the_directory_is_found_from_the_tail() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(5):
            zf.writestr(f"m{i}.py", "x" * 1000)
    data = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        first = min(i.header_offset for i in zf.infolist())
        assert first == 0
    tail_start = len(data) - 300
    offset, size = _directory(data[tail_start:], tail_start)
    assert data[offset : offset + 4] == b"PK\x01\x02" and offset + size == len(data) - 22


def test_a_tail_without_an_end_record_is_no_wheel() -> None:
    with pytest.raises(TargetError, match="no zip end record"):
        _directory(b"\0" * 100, 0)


def _row(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def test_record_hashes_are_checked_for_the_files_kept(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg-1.dist-info").mkdir()
    (tmp_path / "pkg" / "a.py").write_bytes(b"A = 1\n")
    (tmp_path / "pkg" / "_c.so").write_bytes(b"")  # kept as an empty file: not compared
    rows = [_row("pkg/a.py", b"A = 1\n"), _row("pkg/_c.so", b"\x7fELF"), "pkg-1.dist-info/RECORD,,"]
    record = tmp_path / "pkg-1.dist-info" / "RECORD"
    record.write_text("\n".join(rows) + "\n")
    check_record(tmp_path)
    (tmp_path / "pkg" / "a.py").write_bytes(b"A = 2\n")
    with pytest.raises(TargetError, match=r"pkg/a\.py does not match the sha256"):
        check_record(tmp_path)
