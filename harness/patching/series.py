"""The ``patches/`` layout: ``patches/<dist>/<version>/NNNN-slug.patch`` + ``series.toml``.

```toml
[[patch]]
file = "0001-tokenizer-trust-remote-code.patch"
why = "Kimi-K2.5's tokenizer is custom code; vLLM 0.16 loads it only with trust_remote_code"
requires = { vllm = ">=0.16,<0.17" }

[verified]  # optional: callee versions a GPU run of the whole series is recorded on
vllm = ["0.20.2"]
```
The list order is the apply order. Errors name series.toml:line and the key.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from harness.config import locate_line
from harness.errors import ConfigError, PatchError

if TYPE_CHECKING:  # diffs and packaging.specifiers: only once a patch is read (~10 ms)
    from harness.patching.diffs import FilePatch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NAME = re.compile(r"^\d{4}-[a-z0-9][a-z0-9-]*\.patch$")
PATCH_KEYS = ("file", "why", "requires")
_VERIFIED_HINT = 'exact callee versions a GPU run of the series is recorded on: vllm = ["0.20.2"]'


@dataclass(frozen=True)
class PatchSpec:
    id: str  # "0001-tokenizer-trust-remote-code"
    file: Path
    why: str
    requires: tuple[tuple[str, str], ...]  # (dist, specifier)
    text: str
    files: tuple[FilePatch, ...]

    @property
    def sha256(self) -> str:
        import hashlib

        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def content_sha256(self) -> str:
        """Digest of what the patch *does* (paths and hunks), not of its commentary.

        An edited description or a moved ``why`` paragraph leaves the applied change as it
        was; a changed hunk does not -- that is what makes an applied patch stale.
        """
        import hashlib
        import json

        body = [
            [fp.path, fp.new_file, fp.deleted]
            + [[h.old_start, list(h.old_lines), list(h.new_lines)] for h in fp.hunks]
            for fp in self.files
        ]
        return hashlib.sha256(json.dumps(body).encode()).hexdigest()


@dataclass(frozen=True)
class Series:
    dist: str
    version: str
    folder: Path
    patches: tuple[PatchSpec, ...]
    #: ``[verified]``: (callee, versions) a GPU run of the whole series is recorded on.
    verified: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def verified_on(self, dist: str, version: str) -> bool:
        """Whether a GPU run of this series is recorded on ``dist`` ``version``."""
        from packaging.version import Version

        want = canonicalize_name(dist)
        return any(
            d == want and any(Version(v) == Version(version) for v in vs) for d, vs in self.verified
        )


def patches_root(explicit: Path | None = None) -> Path:
    """``--patches DIR``, else ``patches/`` beside hosts.toml's folder or in the cwd's parents."""
    if explicit is not None:
        return explicit
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "patches").is_dir():
            return d / "patches"
    return here / "patches"


def versions_with_series(root: Path, dist: str) -> list[str]:
    d = root / canonicalize_name(dist)
    if not d.is_dir():
        d = root / dist
    return (
        sorted(p.name for p in d.iterdir() if (p / "series.toml").is_file()) if d.is_dir() else []
    )


def dists_with_series(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*/series.toml")))


def load_series(root: Path, dist: str, version: str) -> Series | None:
    folder = root / dist / version
    toml = folder / "series.toml"
    if not toml.is_file():
        return None
    try:
        text = toml.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ConfigError(f"{toml}:{m.group(1) if m else 1}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{toml}: cannot read: {exc.strerror}") from None
    unknown = set(data) - {"patch", "verified"}
    if unknown:
        key = sorted(unknown)[0]
        raise ConfigError(
            f"{toml}:{locate_line(text, (key,))}: {key}: unknown key",
            "series.toml holds [[patch]] tables and an optional [verified] table",
        )
    entries = data.get("patch") or []
    if not isinstance(entries, list):
        raise ConfigError(f"{toml}:1: patch: expected [[patch]] tables")
    specs: list[PatchSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{toml}:{_nth_table_line(text, i)}"
        specs.append(_patch(folder, entry, where, seen))
    verified = _verified(data.get("verified"), text, toml)
    return Series(dist, version, folder, tuple(specs), verified)


def _verified(value: object, text: str, toml: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[verified]``: ``{callee: [exact versions]}``; one error naming series.toml:line."""
    from packaging.version import InvalidVersion, Version

    if value is None:
        return ()
    if not isinstance(value, dict):
        line = locate_line(text, ("verified",))
        raise ConfigError(f"{toml}:{line}: verified: expected a table", _VERIFIED_HINT)
    out = []
    for dist, versions in value.items():
        where = f"{toml}:{locate_line(text, ('verified', dist))}: verified.{dist}"
        if not isinstance(versions, list) or not versions:
            raise ConfigError(
                f"{where}: expected a list of versions, got {versions!r}", _VERIFIED_HINT
            )
        for v in versions:
            try:
                Version(v) if isinstance(v, str) else Version("")
            except InvalidVersion:
                raise ConfigError(f"{where}: {v!r} is not a version", _VERIFIED_HINT) from None
        out.append((canonicalize_name(dist), tuple(versions)))
    return tuple(out)


def _nth_table_line(text: str, n: int) -> int:
    count = -1
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith("[[patch]]"):
            count += 1
            if count == n:
                return i
    return 1


def _patch(folder: Path, entry: object, where: str, seen: set[str]) -> PatchSpec:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: each [[patch]] must be a table")
    for key in entry:
        if key not in PATCH_KEYS:
            import difflib

            close = difflib.get_close_matches(key, PATCH_KEYS, n=1)
            raise ConfigError(
                f"{where}: patch.{key}: unknown key",
                (f"did you mean {close[0]!r}? " if close else "")
                + "valid keys: "
                + ", ".join(PATCH_KEYS),
            )
    name = entry.get("file")
    if not isinstance(name, str) or not NAME.match(name):
        raise ConfigError(
            f"{where}: patch.file: expected a name like 0001-short-slug.patch, got {name!r}"
        )
    if name in seen:
        raise ConfigError(f"{where}: patch.file: {name} is listed twice")
    twin = next((n for n in sorted(seen) if n[:4] == name[:4]), None)
    if twin is not None:
        raise ConfigError(
            f"{where}: patch.file: {name} is numbered like {twin} (both {name[:4]})",
            "two patches made apart took the same number; rename one to the next free number "
            "(the [[patch]] order is the apply order)",
        )
    seen.add(name)
    why = entry.get("why")
    if not isinstance(why, str) or not why.strip():
        raise ConfigError(
            f"{where}: patch.why: say in one line why this patch exists",
            "reviewers read it in `harness patches` and the report",
        )
    reqs = entry.get("requires") or {}
    if not isinstance(reqs, dict):
        raise ConfigError(
            f'{where}: patch.requires: expected a table like {{ vllm = ">=0.16,<0.17" }}'
        )
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from harness.patching.diffs import parse, patch_text

    requires = []
    for dist, spec in reqs.items():
        try:
            SpecifierSet(str(spec))
        except InvalidSpecifier:
            raise ConfigError(
                f"{where}: patch.requires.{dist}: {spec!r} is not a version specifier",
                'e.g. ">=0.16,<0.17"',
            ) from None
        requires.append((canonicalize_name(dist), str(spec)))
    path = folder / name
    try:
        text = patch_text(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{where}: patch.file: cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:  # binary bytes, or another encoding
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); a patch is "
            f"a text diff (named at {where})",
            "harness patches Python sources as UTF-8 text; re-create the patch from the "
            "edited file with: harness make-patch DIST FILE --name SLUG",
        ) from None
    try:
        files = parse(text, str(path))
    except PatchError:
        raise
    return PatchSpec(name[: -len(".patch")], path, why.strip(), tuple(requires), text, tuple(files))


def requirement_problem(spec: PatchSpec, installed: dict[str, str | None]) -> str | None:
    """Pure: why a patch's ``requires`` does not hold on this target, or None."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    for dist, text in spec.requires:
        have = installed.get(dist)
        if have is None:
            return f"{dist} is not installed (needs {text})"
        try:
            ok = Version(have) in SpecifierSet(text, prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            return f"{dist} {have} is not {text}"
    return None
