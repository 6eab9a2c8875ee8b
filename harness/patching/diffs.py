"""Unified diffs: parse (with file:line errors), apply with zero fuzz, and write. Pure.

Patch-package semantics: paths are relative to site-packages (``a/speculators/x.py``), context
must match exactly, and only a bounded line offset is tolerated (and reported) -- a patch that
needs fuzz is a patch written for other code, and applying it anyway is how environments rot.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from harness.errors import PatchError

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
MAX_OFFSET = 50  # lines a hunk may have drifted (e.g. an unrelated edit above it)


def lines_of(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` only, every byte kept: ``str.splitlines`` also cuts at
    a lone CR, form feed, U+2028..., which a patch must carry inside its line, not end it on."""
    parts = text.split("\n")
    last = parts.pop()
    return [line + "\n" for line in parts] + ([last] if last else [])


def patch_text(data: bytes) -> str:
    """A patch file's text, byte for byte (a CR at the end of a changed line is part of the
    change); only a file whose every line ends in CRLF -- one an editor or git converted --
    reads with plain newlines. Raises ``UnicodeDecodeError``."""
    text = data.decode("utf-8")
    ends = text.count("\n")
    if ends and text.count("\r\n") == ends:
        text = text.replace("\r\n", "\n")
    return text


@dataclass(frozen=True)
class Hunk:
    old_start: int  # 1-based, as in the header
    old_lines: tuple[str, ...]  # context + removed, without the leading marker, with newlines
    new_lines: tuple[str, ...]  # context + added
    patch_line: int  # where the hunk header is in the patch file
    header: str


@dataclass(frozen=True)
class FilePatch:
    path: str  # relative to site-packages ("speculators/x.py"), "a/"/"b/" stripped
    hunks: tuple[Hunk, ...]
    patch_line: int
    new_file: bool = False
    deleted: bool = False


def _strip_prefix(raw: str) -> str:
    path = raw.split("\t", 1)[0].strip()
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def check_path(path: str, where: str) -> str:
    """Refuse paths that could leave site-packages: absolute, ``..``, drive letters, empty."""
    p = path.replace("\\", "/")
    parts = p.split("/")
    if (
        not p
        or p.startswith("/")
        or re.match(r"^[A-Za-z]:", p)
        or ".." in parts
        or "" in parts
        or "." in parts
    ):
        raise PatchError(
            f"{where}: path {path!r} leaves site-packages",
            "patch paths must be relative, like a/speculators/module.py; what lies outside "
            "(executables in bin/, other environments) is never patched",
        )
    return p


def parse(text: str, name: str) -> list[FilePatch]:
    """Parse a unified diff; any other shape is refused with the patch's file:line."""
    lines = lines_of(text)
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("GIT binary patch") or line.startswith("Binary files "):
            raise PatchError(
                f"{name}:{i + 1}: binary patches are not supported",
                "patch only text (Python) files",
            )
        if re.match(r"^\d+(,\d+)?[acd]\d+(,\d+)?\s*$", line):
            raise PatchError(
                f"{name}:{i + 1}: this is an ed-style/normal diff",
                "write unified diffs: diff -u, git diff, or harness make-patch",
            )
        if line.startswith("--- "):
            if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
                raise PatchError(f"{name}:{i + 1}: '---' header without a '+++' line")
            old_raw, new_raw = line[4:], lines[i + 1][4:]
            start = i + 1
            new_file = old_raw.strip().startswith("/dev/null")
            deleted = new_raw.strip().startswith("/dev/null")
            path = check_path(_strip_prefix(new_raw if not deleted else old_raw), f"{name}:{start}")
            i += 2
            hunks: list[Hunk] = []
            while i < len(lines) and lines[i].startswith("@@"):
                hunk, i = _hunk(lines, i, name)
                hunks.append(hunk)
            if not hunks:
                raise PatchError(f"{name}:{start}: no hunks for {path}")
            files.append(FilePatch(path, tuple(hunks), start, new_file, deleted))
            continue
        if line.startswith("@@"):
            raise PatchError(f"{name}:{i + 1}: hunk without a ---/+++ file header")
        i += 1  # commentary (e.g. the "why" paragraph, git's "diff --git" lines)
    if not files:
        raise PatchError(
            f"{name}:1: no unified-diff file sections found",
            "a patch needs '--- a/PATH', '+++ b/PATH' and '@@' hunks",
        )
    seen: set[str] = set()
    for f in files:
        if f.path in seen:
            raise PatchError(f"{name}:{f.patch_line}: {f.path} appears twice in one patch")
        seen.add(f.path)
    return files


def _hunk(lines: list[str], i: int, name: str) -> tuple[Hunk, int]:
    m = HUNK.match(lines[i])
    if not m:
        raise PatchError(f"{name}:{i + 1}: malformed hunk header {lines[i].strip()!r}")
    old_start, old_n = int(m.group(1)), int(m.group(2) or 1)
    new_n = int(m.group(4) or 1)
    header_line = i + 1
    old: list[str] = []
    new: list[str] = []
    i += 1
    while i < len(lines) and (len(old) < old_n or len(new) < new_n):
        line = lines[i]
        tag, body = line[:1], line[1:]
        if line.startswith("\\"):  # "\ No newline at end of file"
            _drop_newline(old if lines[i - 1][:1] in " -" else new)
            i += 1
            continue
        if tag == " " or line in ("\n", "\r\n"):
            body = body if tag == " " else line
            old.append(body)
            new.append(body)
        elif tag == "-":
            old.append(body)
        elif tag == "+":
            new.append(body)
        else:
            raise PatchError(
                f"{name}:{i + 1}: unexpected line in hunk: {line.rstrip()!r}",
                "hunk bodies hold ' ', '-', '+' lines only; counts in the @@ header may be wrong",
            )
        i += 1
    if i < len(lines) and lines[i].startswith("\\"):
        _drop_newline(new if lines[i - 1][:1] == "+" else old)
        i += 1
    if len(old) != old_n or len(new) != new_n:
        raise PatchError(
            f"{name}:{header_line}: hunk says -{old_n} +{new_n} lines, found "
            f"-{len(old)} +{len(new)}",
            "the patch was truncated or edited by hand",
        )
    return Hunk(old_start, tuple(old), tuple(new), header_line, lines[header_line - 1].strip()), i


def _drop_newline(seq: list[str]) -> None:
    if seq and seq[-1].endswith("\n"):
        seq[-1] = seq[-1][:-1]


@dataclass(frozen=True)
class HunkResult:
    hunk: Hunk
    applied_at: int | None  # 1-based line in the original where it matched; None: conflict
    offset: int = 0
    expected: tuple[str, ...] = ()  # on conflict: what the hunk wanted to find
    found: tuple[str, ...] = ()  # ... and what the file has there


@dataclass(frozen=True)
class ApplyResult:
    path: str
    new_text: str | None  # None when any hunk conflicts
    hunks: tuple[HunkResult, ...]

    @property
    def conflicts(self) -> list[HunkResult]:
        return [h for h in self.hunks if h.applied_at is None]


def _matches(lines: list[str], at: int, want: tuple[str, ...]) -> bool:
    if at < 0 or at + len(want) > len(lines):
        return False
    return all(lines[at + k] == want[k] for k in range(len(want)))


def _locate(lines: list[str], want: tuple[str, ...], guess: int, floor: int) -> int | None:
    for delta in range(MAX_OFFSET + 1):
        for at in (guess + delta, guess - delta) if delta else (guess,):
            if at >= floor and _matches(lines, at, want):
                return at
    return None


def apply(fp: FilePatch, text: str | None) -> ApplyResult:
    """Apply one file's hunks in memory; exact context, offset ≤ MAX_OFFSET, no fuzz."""
    if fp.new_file and text is None:
        new = "".join(fp.hunks[0].new_lines)
        return ApplyResult(fp.path, new, (HunkResult(fp.hunks[0], 1),))
    if text is None:
        return ApplyResult(
            fp.path, None, tuple(HunkResult(h, None, 0, h.old_lines, ()) for h in fp.hunks)
        )
    lines = lines_of(text)
    out: list[str] = []
    pos = 0
    results: list[HunkResult] = []
    shift = 0
    ok = True
    for h in fp.hunks:
        guess = max(h.old_start - 1 + shift, 0) if h.old_lines else h.old_start + shift
        at = _locate(lines, h.old_lines, guess, pos)
        if at is None:
            ok = False
            show = lines[max(guess, 0) : max(guess, 0) + max(len(h.old_lines), 1)]
            results.append(HunkResult(h, None, 0, h.old_lines, tuple(show)))
            continue
        results.append(HunkResult(h, at + 1, at - (h.old_start - 1)))
        shift = at - (h.old_start - 1)
        out.extend(lines[pos:at])
        out.extend(h.new_lines)
        pos = at + len(h.old_lines)
    if not ok:
        return ApplyResult(fp.path, None, tuple(results))
    out.extend(lines[pos:])
    return ApplyResult(fp.path, "".join(out) if not fp.deleted else "", tuple(results))


def is_applied(fp: FilePatch, text: str | None) -> bool:
    """True when reversing every hunk applies cleanly: the file already has the patch."""
    if text is None:
        return fp.deleted
    rev = FilePatch(
        fp.path,
        tuple(
            Hunk(h.old_start, h.new_lines, h.old_lines, h.patch_line, h.header) for h in fp.hunks
        ),
        fp.patch_line,
    )
    return not apply(rev, text).conflicts and not apply(fp, text).new_text


def reverse(fp: FilePatch) -> FilePatch:
    return FilePatch(
        fp.path,
        tuple(
            Hunk(h.old_start, h.new_lines, h.old_lines, h.patch_line, h.header) for h in fp.hunks
        ),
        fp.patch_line,
        new_file=fp.deleted,
        deleted=fp.new_file,
    )


def unified(path: str, before: str, after: str, context: int = 3) -> str:
    """A unified diff ``a/PATH`` -> ``b/PATH`` (what make-patch writes and reports show)."""
    diff = difflib.unified_diff(
        lines_of(before),
        lines_of(after),
        f"a/{path}",
        f"b/{path}",
        n=context,
    )
    out = []
    for line in diff:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
