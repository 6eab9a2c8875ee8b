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


_PATTERNS: dict[bytes, tuple[re.Pattern[bytes], ...]] = {}


def _defines(block: bytes, name: bytes) -> bool:
    pats = _PATTERNS.get(name)
    if pats is None:
        n = re.escape(name)
        pats = _PATTERNS[name] = (
            re.compile(rb"^(?: {4}|\t)(?:async[ \t]+)?def[ \t]+" + n + rb"\b", re.M),
            re.compile(rb"self\." + n + rb"\b(?:\s*,\s*[\w.\[\]]+)*\s*(?::[^=\n]+)?=(?!=)"),
            re.compile(rb"^(?: {4}|\t)" + n + rb"[ \t]*(?::|=(?!=))", re.M),
        )
    if b"def " + name in block and pats[0].search(block):
        return True
    if b"self." + name in block and pats[1].search(block):
        return True
    return pats[2].search(block) is not None


def _misses(data: bytes, needles: list[bytes]) -> int:
    """How many names the text lacks, stopping at two (needles come longest, i.e. rarest, first)."""
    misses = 0
    for x in needles:
        if x not in data:
            misses += 1
            if misses > 1:
                break
    return misses


def _blocks(data: bytes, anchors: list[bytes]) -> list[tuple[re.Match[bytes], bytes]]:
    """(header match, text up to the next top-level class) of each top-level class holding
    one of ``anchors`` -- found from the anchors' positions, not by scanning every class."""
    starts = set()
    for x in anchors:
        i = data.find(x)
        while i >= 0:
            j = data.rfind(b"\nclass ", 0, i)
            if j >= 0:
                starts.add(j + 1)
            elif data.startswith(b"class "):
                starts.add(0)
            i = data.find(x, i + len(x))
    out = []
    for start in sorted(starts):
        m = _CLASS.match(data, start)
        if m is not None:
            end = data.find(b"\nclass ", start + 1)
            out.append((m, data[start : end + 1 if end >= 0 else len(data)]))
    return out


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
        # os.walk joins plain names onto a normalised root: relpath's result is the tail
        # (relpath costs ~5 ms over vLLM's 1,359 files)
        head = base + os.sep if base == os.path.abspath(base) else None
        for d, dirs, files in os.walk(folder):
            dirs.sort()
            touch(d)
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(d, f)
                    if head is not None and path.startswith(head):
                        out.append((path, path[len(head) :]))
                    else:
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
    texts: dict[str, bytes] = {}  # rel path -> text, kept to look up bases afterwards
    for path, rel in files:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        touch(path)
        texts[rel] = data
        hits = [w for w in wanted if _misses(data, w[2]) <= 1]
        if not hits:
            continue
        module = rel[:-3].replace(os.sep, ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        for key, attrs, needles in hits:
            present = [x for x in needles if x in data][:2]  # a fitting class holds one of two
            for m, raw in _blocks(data, present if len(needles) > 1 else needles):
                if _misses(raw, needles) > (1 if len(needles) > 1 else 0):
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
            entry["inherits"] = _inherits(
                texts, entry["bases"], entry["missing"][0], 0, texts.get(entry["file"], b"")
            )
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


def _inherits(
    texts: dict[str, bytes], bases: str, attr: str, depth: int = 0, here: bytes = b""
) -> bool | None:
    key = (bases, attr, depth)
    if key not in _SEEN:
        _SEEN[key] = _inherits_uncached(texts, bases, attr, depth, here)
    return _SEEN[key]


def _imported_from(here: bytes, name: str, texts: dict[str, bytes]) -> list[bytes]:
    """The file ``from pkg.mod import Name`` names, when it is in the package (else [])."""
    pat = re.compile(
        rb"^from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\([^)]*\b|[^\n]*\b)" + name.encode() + rb"\b",
        re.M,
    )
    m = pat.search(here)
    if m is None:
        return []
    rel = m.group(1).decode().replace(".", "/")
    got = texts.get(rel + ".py") or texts.get(rel + "/__init__.py")
    return [got] if got is not None else []


def _class_at(data: bytes, name: bytes) -> list[tuple[re.Match[bytes], bytes]]:
    """Blocks of the top-level classes named ``name`` in one file."""
    out = []
    head = b"class " + name
    i = data.find(head)
    while i >= 0:
        if i == 0 or data[i - 1 : i] == b"\n":
            m = _CLASS.match(data, i)
            if m is not None and m.group(1) == name:
                end = data.find(b"\nclass ", i + 1)
                out.append((m, data[i : end + 1 if end >= 0 else len(data)]))
        i = data.find(head, i + 1)
    return out


def _inherits_uncached(
    texts: dict[str, bytes], bases: str, attr: str, depth: int, here: bytes
) -> bool | None:
    todo = _base_names(bases)
    if not todo:
        return False
    if depth > 3:
        return None
    needle = attr.encode()
    for name in todo:
        # where the class's file imports the base from (or the file itself); else anywhere
        near = [here, *_imported_from(here, name, texts)] if here else []
        found = False
        for pool in (near, texts.values()):
            for data in pool:
                if b"class " + name.encode() not in data:
                    continue
                for m, raw in _class_at(data, name.encode()):
                    found = True
                    block = _trim(m, raw)
                    if needle in block and _defines(block, needle):
                        return True
                    deeper = _inherits(
                        texts,
                        " ".join((m.group(2) or b"").decode().split()),
                        attr,
                        depth + 1,
                        data,
                    )
                    if deeper is not False:
                        return deeper
            if found:
                break
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
