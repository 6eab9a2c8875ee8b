"""A one-module dist installed by hand into a folder (the smallest real input for the probes
that read a dist's files and RECORD: ``api``, ``patchops``), and a target that reads it."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from harness.targets.local import LocalTarget


class FolderTarget(LocalTarget):
    """This interpreter, reading packages from one folder only (a real subprocess)."""

    def __init__(self, folder: Path, label: str) -> None:
        super().__init__(label=label)
        self.folder = folder

    def probe_paths(self) -> list[str]:
        return [str(self.folder)]


def record_hash(data: bytes) -> str:
    """RECORD's spelling of a file's hash (``sha256=<urlsafe b64, unpadded>``)."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def install(site: Path, version: str, core: str, name: str = "tinypkg") -> Path:
    """``name`` (a package with ``core.py`` holding ``core``) at ``version`` in ``site``."""
    files = {f"{name}/__init__.py": "", f"{name}/core.py": core}
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        lines.append(f"{rel},{record_hash(text.encode())},{len(text.encode())}")
    lines += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return site
