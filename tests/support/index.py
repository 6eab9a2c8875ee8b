"""A real package index on loopback: a PEP 503 simple index over HTTP, serving handwritten wheels.

pip talks to it exactly as to PyPI (it is a real ``http.server``, not a mock), but it holds
only ``tinyidx`` in a few versions, answers in milliseconds, can be slowed down to make a
download take seconds (progress bars, Ctrl-C mid-download), and needs no network. The
environment from :meth:`Index.pip_env` makes pip ignore the machine's own pip config.

By default it answers every file request with the whole file, as a server or proxy without
byte ranges does (``Range`` is ignored, like ``http.server``'s own); ``index.ranges = True``
makes it serve single ranges (``bytes=A-B``, ``bytes=A-``, ``bytes=-N``) with 206, an ETag
and ``If-Range``, as PyPI's CDN does. :func:`serve` runs one over any folder of wheels.

A link can be modelled (``bench/pypi_bench.py --link``): ``rate`` is one link's bytes per
second, shared by every connection (a client that opens four gets a quarter each, as on a
real line), and ``latency`` is its round-trip time: one per request, two more when a
connection opens (TCP, and TLS 1.3 as PyPI's CDN speaks it).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import os
import re
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

NAME = "tinyidx"
VERSIONS = ("0.9.0", "1.0.0", "1.1.0", "2.0.0", "2.1.0", "3.0.0", "3.1.0rc1")
PAYLOAD = 2_000_000  # bytes of incompressible data per wheel: a download worth a progress bar


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(folder: Path, version: str) -> Path:
    """``tinyidx-VERSION-py3-none-any.whl`` with a module, a data blob and its metadata."""
    info = f"{NAME}-{version}.dist-info"
    files = {
        f"{NAME}/__init__.py": f'"""tinyidx {version}."""\n\n\ndef hello(name):\n    return name\n',
        f"{NAME}/blob.bin": os.urandom(PAYLOAD),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    path = folder / f"{NAME}-{version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, body in files.items():
            data = body if isinstance(body, bytes) else body.encode()
            zf.writestr(name, data)
            rows.append(f"{name},{_record_hash(data)},{len(data)}")
        rows.append(f"{info}/RECORD,,")
        zf.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return path


@dataclass
class Index:
    root: Path
    url: str
    rate: float | None = None  # the link's bytes per second for wheel bytes; None: full speed
    requests: int = 0
    ranges: bool = False  # serve Range requests (206); False: always the whole file (200)
    bytes_sent: int = 0  # wheel bytes written to clients
    range_requests: int = 0  # file requests answered with 206
    latency: float = 0.0  # seconds of round trip: one per request, two per new connection
    _free: float = 0.0  # when the link is next free to send (see pace)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _digests: dict[tuple[str, int, int], str] = field(default_factory=dict)

    def pace(self, n: int) -> None:
        """Hold ``n`` bytes back until the shared link has sent what was queued before them."""
        if not self.rate:
            return
        with self._lock:
            start = max(time.monotonic(), self._free)
            self._free = start + n / self.rate
            wait = self._free - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def digest(self, path: Path) -> str:
        """sha256 of a served file, computed once per version of it (a wheel may be 500 MB)."""
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size)
        if key not in self._digests:
            h = hashlib.sha256()
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            self._digests[key] = h.hexdigest()
        return self._digests[key]

    def pip_env(self, tmp: Path) -> dict[str, str]:
        """pip against this index only: no config files, no find-links, a private cache."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env.update(
            {
                "PIP_CONFIG_FILE": os.devnull,
                "PIP_INDEX_URL": f"{self.url}/simple/",
                "PIP_CACHE_DIR": str(tmp / "pip-cache"),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                "PIP_RETRIES": "0",
                "PIP_TIMEOUT": "30",
            }
        )
        return env


def _handler(index: Index) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def setup(self) -> None:
            super().setup()
            if index.latency:
                time.sleep(2 * index.latency)  # the connection's handshakes

        def do_GET(self) -> None:
            index.requests += 1
            if index.latency:
                time.sleep(index.latency)
            path = self.path.split("?", 1)[0].split("#", 1)[0]
            if path.startswith("/simple/") and self._wheels(path.rstrip("/")[8:]):
                self._page(self._wheels(path.rstrip("/")[8:]))
            elif path.startswith("/files/"):
                self._file(index.root / Path(path).name)
            else:
                self.send_error(404)

        def _wheels(self, project: str) -> list[Path]:
            norm = re.sub(r"[-_.]+", "-", project).lower()
            return [
                w
                for w in sorted(index.root.glob("*.whl"))
                if re.sub(r"[-_.]+", "-", w.name.split("-")[0]).lower() == norm
            ]

        def _page(self, wheels: list[Path]) -> None:
            links = []
            for whl in wheels:
                digest = index.digest(whl)
                href = html.escape(f"/files/{whl.name}#sha256={digest}")
                links.append(f'<a href="{href}">{html.escape(whl.name)}</a><br/>')
            body = ("<!DOCTYPE html><html><body>" + "".join(links) + "</body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _file(self, path: Path) -> None:
            if not path.is_file():
                self.send_error(404)
                return
            size = path.stat().st_size
            etag = f'"{index.digest(path)[:16]}"'
            span = self._range(size, etag) if index.ranges else None
            self.send_response(200 if span is None else 206)
            self.send_header("Content-Type", "application/octet-stream")
            if index.ranges:
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("ETag", etag)
            start, end = (0, size - 1) if span is None else span
            if span is not None:
                index.range_requests += 1
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            step = 64 * 1024
            try:
                with path.open("rb") as f:
                    f.seek(start)
                    left = end - start + 1
                    while left > 0:
                        chunk = f.read(min(step, left))
                        if not chunk:
                            break
                        index.pace(len(chunk))
                        self.wfile.write(chunk)
                        index.bytes_sent += len(chunk)
                        left -= len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (Ctrl-C): fine

        def _range(self, size: int, etag: str) -> tuple[int, int] | None:
            """The inclusive span a single ``Range`` asks for; None: send the whole file."""
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
            if m is None or not any(m.groups()):
                return None
            if self.headers.get("If-Range", etag) != etag:
                return None  # the file changed: the whole new one
            if not m.group(1):
                return max(0, size - int(m.group(2))), size - 1
            start = int(m.group(1))
            end = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
            return (start, end) if start <= end else None

    return Handler


@pytest.fixture(scope="session")
def index_wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tinyidx-wheels")
    for v in VERSIONS:
        build_wheel(folder, v)
    return folder


@pytest.fixture
def index(index_wheels: Path) -> Iterator[Index]:
    """A running index; set ``index.rate`` to slow downloads down."""
    with serve(index_wheels) as idx:
        yield idx


@contextlib.contextmanager
def serve(root: Path) -> Iterator[Index]:
    """An index over the wheels in ``root``, on a free loopback port, while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    idx = Index(root, f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(idx)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield idx
    finally:
        server.shutdown()
        server.server_close()
