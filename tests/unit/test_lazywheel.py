"""Lazy wheels (issue 26) without a network: which byte spans to fetch, where the directory is,
the order members come out in and the requests that cost (against a fake ranged session),
the member reader's checks, and the RECORD check a folder passes before it is published."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import TargetError
from harness.targets.lazywheel import GAP, TAIL, LazyWheel, _directory, plan
from harness.targets.unpack import _mark_top, _Reader, check_record, member_kind, write_layout


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


class _Resp:
    """A 206 for ``bytes=A-B`` / ``bytes=-N`` of ``data``, as a CDN sends it."""

    def __init__(self, data: bytes, spec: str) -> None:
        a, b = spec.removeprefix("bytes=").split("-")
        start, end = (len(data) - int(b), len(data) - 1) if not a else (int(a), int(b))
        self.status_code, self.body = 206, data[start : end + 1]
        self.headers = {"Content-Range": f"bytes {start}-{end}/{len(data)}", "ETag": '"e"'}

    def iter_content(self, n: int) -> Iterator[bytes]:
        yield from (self.body[i : i + n] for i in range(0, len(self.body), n))

    def close(self) -> None:
        pass


class _Session:
    """Serves one wheel's bytes; records each range asked for."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.asked: list[str] = []

    def get(self, url: str, headers: dict[str, str], stream: bool) -> _Resp:
        self.asked.append(headers["Range"])
        return _Resp(self.data, headers["Range"])


def _spread_wheel(path: Path) -> bytes:
    """Sources in 3 runs, kept apart by incompressible blobs wider than GAP."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for run in range(3):
            for i in range(4):
                zf.writestr(f"pkg/m{run}_{i}.py", f"X = {run * 10 + i}\n" * 50)
            zf.writestr(f"pkg/blob{run}.bin", os.urandom(GAP + 4096))
        zf.writestr("pkg-1.dist-info/METADATA", "Name: pkg\nVersion: 1\n")
    return path.read_bytes()


def test_members_come_in_wheel_order_each_after_its_span_and_requests_are_bounded(
    tmp_path: Path,
) -> None:
    data = _spread_wheel(tmp_path / "src.whl")
    session = _Session(data)
    seen: list[tuple[str, int]] = []
    with LazyWheel(session, "https://x/pkg-1-py3-none-any.whl", tmp_path / "s.whl") as wheel:
        zf = wheel.open()
        for info in wheel.members(_keep):
            seen.append((info.filename, len(session.asked)))
            if _keep(info.filename):  # its bytes are in the file already
                with open(wheel.path, "rb") as fh:
                    fh.seek(info.header_offset)
                    assert fh.read(4) == b"PK\x03\x04"
        assert [n for n, _ in seen] == [
            i.filename for i in sorted(zf.infolist(), key=lambda i: i.header_offset)
        ]
        # the tail (directory and METADATA in it), then one request per run of sources
        assert len(session.asked) == 1 + 3 and wheel.stats.requests == 4
        assert session.asked[0] == f"bytes=-{TAIL}"
        assert wheel.stats.fetched < len(data) / 2


def test_the_reader_checks_deflated_members_as_zipfile_does(tmp_path: Path) -> None:
    path = tmp_path / "d.whl"
    _spread_wheel(path)
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        reader = _Reader(zf, fh.fileno())
        for info in zf.infolist():
            assert reader.read(info) == zf.read(info)
        info = zf.getinfo("pkg/m1_2.py")
        info.CRC ^= 1
        with pytest.raises(zipfile.BadZipFile, match=r"Bad CRC-32 for file 'pkg/m1_2\.py'"):
            reader.read(info)
        info.CRC ^= 1
        other = zf.getinfo("pkg/m1_3.py")
        other.header_offset, other.orig_filename = info.header_offset, "pkg/m1_3.py"
        with pytest.raises(zipfile.BadZipFile, match="differ"):
            reader.read(other)


def test_a_record_mismatch_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    wheel = tmp_path / "w" / "pkg-1-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/a.py", "A = 1\n")
        with pytest.warns(UserWarning, match="Duplicate name"):
            zf.writestr("pkg/a.py", "A = 2\n")  # the same name twice: the last one counts
        zf.writestr("pkg-1.dist-info/RECORD", _row("pkg/a.py", b"A = 2\n") + "\n")
    done = tmp_path / "pypi" / "pkg-1"
    with zipfile.ZipFile(wheel) as zf:
        write_layout(zf, wheel, zf.infolist(), done, wheel.name, "h", check_record=True)
    assert (done / "pkg" / "a.py").read_text() == "A = 2\n"
    assert {oct(p.stat().st_mode & 0o777) for p in done.rglob("*") if p.is_file()} == {"0o444"}
    other = tmp_path / "w" / "pkg-2-py3-none-any.whl"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("pkg/a.py", "A = 1\n")
        zf.writestr("pkg-2.dist-info/RECORD", _row("pkg/a.py", b"A = 3\n") + "\n")
    with zipfile.ZipFile(other) as zf, pytest.raises(TargetError, match="does not match"):
        write_layout(
            zf, other, zf.infolist(), tmp_path / "pypi" / "pkg-2", other.name, "h",
            check_record=True,
        )  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "pypi").iterdir()) == ["pkg-1"]


def test_a_connection_cut_mid_span_is_said_as_such(tmp_path: Path) -> None:
    class Cut(_Session):
        def get(self, url: str, headers: dict[str, str], stream: bool) -> _Resp:
            resp = super().get(url, headers, stream)
            if len(self.asked) > 1:  # the tail arrives; the first span breaks off
                resp.iter_content = lambda n: iter([b"x" * 10, *_raise()])  # type: ignore[method-assign]
            return resp

    def _raise() -> Iterator[bytes]:
        raise ConnectionResetError("reset by peer")

    session = Cut(_spread_wheel(tmp_path / "src.whl"))
    with LazyWheel(session, "https://x/pkg-1-py3-none-any.whl", tmp_path / "s.whl") as wheel:
        wheel.open()
        with pytest.raises(TargetError, match=r"pkg-1-py3-none-any\.whl broke off: reset by peer"):
            list(wheel.members(_keep))


def test_the_folder_of_layouts_is_marked_the_top_of_unrelated_hierarchies(
    tmp_path: Path,
) -> None:
    """``chattr +T`` on ``pypi/`` where the file system has it (ext2/3/4): each layout's
    folders then go to a block group with room, not the parent's much-used one."""
    import fcntl
    import struct
    import sys

    def topdir(folder: Path) -> bool:
        fd = os.open(folder, os.O_RDONLY)
        try:
            flags = bytearray(4)
            fcntl.ioctl(fd, (2 << 30) | (struct.calcsize("l") << 16) | 0x6601, flags)
            return bool(int.from_bytes(flags, sys.byteorder) & 0x00020000)
        except OSError:
            return False
        finally:
            os.close(fd)

    probe = tmp_path / "probe"
    probe.mkdir()
    _mark_top(probe)
    if not topdir(probe):
        pytest.skip("this file system has no chattr +T")
    wheel = tmp_path / "pkg-1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/a.py", "A = 1\n")
    with zipfile.ZipFile(wheel) as zf:
        write_layout(zf, wheel, zf.infolist(), tmp_path / "pypi" / "pkg-1", wheel.name, "h")
    assert topdir(tmp_path / "pypi") and not topdir(tmp_path / "pypi" / "pkg-1")
