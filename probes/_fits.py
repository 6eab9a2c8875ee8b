"""Which classes of a package define a set of attributes: the classes a patched-in method fits.

A caller that installs its own function as a method on a callee object
(``obj.forward = types.MethodType(_patched_forward, obj)``) relies on every attribute the
function reads on ``self``; the object's class is rarely known statically, but the classes it
can be are those that define all of them. Parsing a whole package to find them would cost
seconds, so this reads each file once as bytes, keeps only files and top-level class blocks
that contain every name, and decides on the block's text: a ``def NAME`` at class-body level,
a ``self.NAME = ...`` store (tuple targets too), or a class-level ``NAME = ``/``NAME:``.
"""

from __future__ import annotations

import os
import re

from probes._finder import touch

_CLASS = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.M)
_DEF = re.compile(rb"^(?: {4}|\t)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)
TRIVIAL_BASES = {"", "object", "nn.Module", "torch.nn.Module", "Module", "ABC", "abc.ABC"}


def _defines(block: bytes, name: bytes) -> bool:
    n = re.escape(name)
    pats = (
        rb"^(?: {4}|\t)(?:async[ \t]+)?def[ \t]+" + n + rb"\b",
        rb"self\." + n + rb"\b(?:\s*,\s*[\w.\[\]]+)*\s*(?::[^=\n]+)?=(?!=)",
        rb"^(?: {4}|\t)" + n + rb"[ \t]*(?::|=(?!=))",
    )
    return any(re.search(p, block, re.M) for p in pats)


def _misses(data: bytes, needles: list[bytes]) -> int:
    """How many names the text lacks, stopping at two (needles come longest, i.e. rarest, first)."""
    misses = 0
    for x in needles:
        if x not in data:
            misses += 1
            if misses > 1:
                break
    return misses


def _blocks(data: bytes) -> list[tuple[re.Match[bytes], bytes]]:
    """(header match, text up to the next top-level class) for each top-level class."""
    marks = list(_CLASS.finditer(data))
    return [
        (m, data[m.start() : marks[i + 1].start() if i + 1 < len(marks) else len(data)])
        for i, m in enumerate(marks)
    ]


def _trim(m: re.Match[bytes], block: bytes) -> bytes:
    """Cut the block at the first top-level statement after the class body."""
    head = m.end() - m.start()
    cut = re.search(rb"^[^\s#)\]}'\"]", block[head:], re.M)
    return block if cut is None else block[: head + cut.start()]


def _methods(block: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _DEF.finditer(block):
        params = re.sub(rb"\s+", b"", m.group(2)).rstrip(b",").decode("utf-8", "replace")
        out[m.group(1).decode()] = params
    return out


def package_files(folders: list[str]) -> list[tuple[str, str]]:
    """(absolute path, path relative to the import root) of every ``.py`` under the folders."""
    out = []
    for folder in folders:
        base = os.path.dirname(folder)
        for d, dirs, files in os.walk(folder):
            dirs.sort()
            touch(d)
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    out.append((path, os.path.relpath(path, base)))
    return out


def scan_fits(
    files: list[tuple[str, str]], queries: list[list[str]], *, bases: bool = True
) -> dict[str, dict[str, list[dict]]]:
    """For each attribute set: classes defining all (``full``) or all but one (``near``).

    ``files`` are (absolute path, path relative to its root). Returns ``{",".join(attrs):
    {"full": [...], "near": [...]}}``, each class as ``{"module", "qualname", "file", "line",
    "bases", "missing", "methods", "inherits"}`` (methods: name -> parameter text, for rename
    hints; inherits: whether a base may define the missing one -- not read with ``bases=False``).
    """
    wanted = []
    for q in queries:
        attrs = sorted(q, key=len, reverse=True)
        if attrs:
            wanted.append((",".join(q), attrs, [a.encode() for a in attrs]))
    out: dict[str, dict[str, list[dict]]] = {k: {"full": [], "near": []} for k, _, _ in wanted}
    if not wanted:
        return out
    texts: list[bytes] = []  # kept to look up bases by name afterwards
    for path, rel in files:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        touch(path)
        texts.append(data)
        hits = [w for w in wanted if _misses(data, w[2]) <= 1]
        if not hits:
            continue
        module = rel[:-3].replace(os.sep, ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        for m, raw in _blocks(data):
            for key, attrs, needles in hits:
                if _misses(raw, needles) > 1:
                    continue
                block = _trim(m, raw)
                missing = [
                    a
                    for a, x in zip(attrs, needles, strict=True)
                    if x not in block or not _defines(block, x)
                ]
                if len(missing) > 1:
                    continue
                out[key]["near" if missing else "full"].append(
                    {
                        "module": module,
                        "qualname": m.group(1).decode(),
                        "file": rel,
                        "line": data.count(b"\n", 0, m.start()) + 1,
                        "bases": " ".join((m.group(2) or b"").decode("utf-8", "replace").split()),
                        "missing": missing,
                        "methods": _methods(block),
                    }
                )
    for got in out.values() if bases else ():  # the baseline only says which classes fitted
        for entry in got["near"]:
            entry["inherits"] = _inherits(texts, entry["bases"], entry["missing"][0])
    return out


def _base_names(bases: str) -> list[str]:
    names = []
    for b in bases.split(","):
        b = b.strip()
        if "=" in b:  # metaclass=...
            continue
        name = b.split("[")[0].strip().split(".")[-1]
        if name and b not in TRIVIAL_BASES:
            names.append(name)
    return names


_SEEN: dict[tuple[str, str, int], bool | None] = {}


def _inherits(texts: list[bytes], bases: str, attr: str, depth: int = 0) -> bool | None:
    key = (bases, attr, depth)
    if key not in _SEEN:
        _SEEN[key] = _inherits_uncached(texts, bases, attr, depth)
    return _SEEN[key]


def _inherits_uncached(texts: list[bytes], bases: str, attr: str, depth: int) -> bool | None:
    """Does a (non-trivial) base define ``attr``? Bases are found by class name in the package's
    text: True if any class of that name defines it, None if a base is not found, else False."""
    todo = _base_names(bases)
    if not todo:
        return False
    if depth > 3:
        return None
    needle = attr.encode()
    for name in todo:
        head = re.compile(rb"^class[ \t]+" + re.escape(name.encode()) + rb"\b", re.M)
        found = False
        for data in texts:
            if b"class " + name.encode() not in data:
                continue
            for m, raw in _blocks(data):
                if not head.match(data, m.start()):
                    continue
                found = True
                block = _trim(m, raw)
                if needle in block and _defines(block, needle):
                    return True
                deeper = _inherits(
                    texts, " ".join((m.group(2) or b"").decode().split()), attr, depth + 1
                )
                if deeper is not False:
                    return deeper
        if not found:
            return None
    return False


class Background:
    """Run ``search_packages`` in a forked child while the probe resolves symbols (2 cores:
    the ~70 ms of reading a whole package hide behind the lookups). Inline where fork is not
    available or fails; the child's file stats join the probe's fingerprint."""

    def __init__(self, folders: list[str], queries: list[list[str]]) -> None:
        import json

        self._json = json
        self.folders, self.queries = folders, queries
        self.pid = 0
        self.fd = -1
        self.result: dict | None = None
        if not hasattr(os, "fork"):
            return
        try:
            r, w = os.pipe()
            pid = os.fork()
        except OSError:
            return
        if pid == 0:  # child: compute, send, and leave without running the parent's cleanup
            code = 0
            try:
                os.close(r)
                from probes._finder import TOUCHED

                TOUCHED.clear()
                out = search_packages(folders, queries)
                data = json.dumps({"fits": out, "touched": TOUCHED}).encode()
                with os.fdopen(w, "wb") as f:
                    f.write(data)
            except BaseException:
                code = 1
            os._exit(code)
        os.close(w)
        self.pid, self.fd = pid, r

    def join(self) -> dict:
        from probes._finder import TOUCHED

        if self.pid:
            with os.fdopen(self.fd, "rb") as f:
                raw = f.read()
            _, status = os.waitpid(self.pid, 0)
            if status == 0 and raw:
                got = self._json.loads(raw)
                TOUCHED.update({k: tuple(v) for k, v in got["touched"].items()})
                return got["fits"]  # type: ignore[no-any-return]
        return search_packages(self.folders, self.queries)


def search_packages(folders: list[str], queries: list[list[str]]) -> dict:
    return scan_fits(package_files(folders), queries)
