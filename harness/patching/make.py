"""``harness make-patch``: turn hand edits on the target into the next patch of the series.

The base of each file is what the series would produce (the backup of the pristine file with
the series applied in memory) when harness patched it, else the file from the PyPI wheel of
the installed version -- checked against pip's RECORD, so the base is what pip installed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from harness.errors import HarnessError, PatchError, UsageError
from harness.patching.diffs import apply, unified
from harness.patching.ops import TargetState, read_state
from harness.patching.ownership import refusal
from harness.patching.plan import FileChange, adopted_manifest
from harness.patching.series import load_series, versions_with_series
from harness.targets.base import Target


def _wheel_text(dist: str, version: str, path: str) -> str | None:
    from harness.targets.registry import open_kind

    roots = open_kind("pypi", f"{dist}=={version}").probe_paths()
    assert roots is not None  # a pypi: target reads its unpacked wheels
    f = Path(roots[0]) / path
    return f.read_bytes().decode("utf-8") if f.is_file() else None  # CRs kept, as on the box


def _series_text(
    root: Path, dist: str, version: str, path: str, pristine: str, applied: set[str]
) -> str:
    """What harness wrote: the patches the manifest says were applied (not skipped ones)."""
    series = load_series(root, dist, version)
    text: str | None = pristine
    for spec in series.patches if series else ():
        if spec.id not in applied:
            continue
        for fp in spec.files:
            if fp.path == path:
                text = apply(fp, text).new_text or text
    return text or ""


def parse_requires(items: list[str]) -> dict[str, str]:
    """Pure: ``["vllm>=0.20,<0.21"]`` -> ``{"vllm": ">=0.20,<0.21"}`` for series.toml."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out: dict[str, str] = {}
    for text in items:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            req = None
        if req is None or not str(req.specifier) or req.marker or req.extras or req.url:
            raise UsageError(
                f"--requires {text!r}: expected NAME followed by version specifiers",
                "e.g. --requires 'vllm>=0.20,<0.21'",
            )
        # the user's own spelling: SpecifierSet's str() sorts the clauses ("<0.21,>=0.16")
        out[str(canonicalize_name(req.name))] = text.strip()[len(req.name) :].strip()
    return out


def make_patch(
    target: Target,
    root: Path,
    dist: str,
    files: list[str],
    slug: str,
    why: str | None,
    requires: dict[str, str] | None = None,
) -> Path:
    check_slug(slug)
    probe = read_state(target, dist, [])
    version = probe.version
    if version is None:
        raise PatchError(f"{dist} is not installed on {target.label}")
    wanted = files or probe.hand_edited()
    gone = [] if files else probe.missing()
    if gone:  # a deletion is no edit to record: said, not "no hand edits"
        raise UsageError(
            f"{', '.join(gone)}: missing in {dist} {version} on {target.label} (deleted by "
            "hand?); make-patch records edits to files, not deletions"
            + ("" if wanted else "; no other hand edits found"),
            (
                "record the edited files alone by naming them (harness make-patch DIST FILE ...), "
                "or put "
                if wanted
                else "put "
            )
            + f"it back first: pip install --force-reinstall --no-deps {dist}=={version}",
        )
    if not wanted:
        raise UsageError(
            f"no hand edits found in {dist} {version} on {target.label}",
            "name the files: harness make-patch DIST speculators/x.py",
        )
    state = read_state(target, dist, wanted)
    own = state.ownership()
    for path in wanted:
        live = state.live[path]
        refused = refusal(path, live.text is not None or live.binary, own)
        if refused is not None:
            raise PatchError(
                f"{path} {refused}: not recording it in the {dist} series",
                f"a series changes only its own dist's files: harness make-patch OTHER_DIST {path}",
            )
    chunks = []
    bases: dict[str, str] = {}
    for path in wanted:
        live = state.live[path]
        if live.text is None:
            what = "not UTF-8" if live.binary else "missing (deleted by hand?)"
            raise PatchError(f"{path}: {what} on {target.label}")
        backup = state.backups.get(path)
        if path in state.manifest.files and backup is not None:
            applied = set(state.manifest.applied_ids)
            base = _series_text(root, dist, version, path, backup.text, applied)
        else:
            wheel = _wheel_text(dist, version, path)
            if wheel is None:
                raise PatchError(f"{path}: not in the {dist} {version} wheel")
            got = hashlib.sha256(wheel.encode()).hexdigest()
            if state.record.get(path) and got != state.record[path]:
                raise PatchError(
                    f"{path}: the PyPI wheel does not match the target's RECORD",
                    "was this dist installed from another index or build?",
                )
            base = wheel
        if base == live.text:
            continue
        chunks.append(unified(path, base, live.text))
        bases[path] = base
    if not chunks:
        raise UsageError("the named files do not differ from their base; nothing to record")
    reason = why or f"recorded from hand edits on {target.label}"
    made = f"Made by `harness make-patch {dist}` on {target.label}."
    written = record_patch(root, dist, version, slug, chunks, reason, made, requires)
    if target.writable:
        _adopt(target, root, dist, version, written, state, bases)
    return written


def _adopt(
    target: Target,
    root: Path,
    dist: str,
    version: str,
    patch: Path,
    state: TargetState,
    bases: dict[str, str],
) -> None:
    """Record the new patch as applied where it was made, so that ``patches`` reads the
    target as the series through it and ``revert-patches`` restores the pristine files
    (the hand edits had no backup: it is the wheel's file, checked against RECORD above).

    One patchops transaction; each file is rewritten with the bytes it holds, so an edit
    made meanwhile (its sha256 no longer what was read) refuses it, and nothing is recorded.
    """
    from harness.patching.writing import write_files

    series = load_series(root, dist, version)
    spec = next((p for p in series.patches if p.file.name == patch.name), None) if series else None
    assert series is not None and spec is not None  # record_patch read it back
    manifest = adopted_manifest(state.manifest, state.live, bases, spec, dist, version)
    changes = [
        FileChange(
            p, state.live[p].text, state.live[p].text, state.live[p].sha256, state.live[p].mode
        )
        for p in sorted(bases)
    ]
    originals = {p: t for p, t in bases.items() if p not in state.manifest.files}
    try:
        write_files(target, dist, changes, manifest, "make-patch", originals)
    except HarnessError as e:
        raise PatchError(
            f"wrote {patch}, but could not record it as applied on {target.label}: {e.message}",
            "revert-patches will not restore those files; reinstall the dist to get them back",
        ) from None


#: ``--name``'s longest slug: ``NNNN-slug.patch`` stays far below a file name's 255 bytes.
MAX_SLUG = 64


def check_slug(slug: str) -> None:
    if not re.match(r"^[a-z0-9][a-z0-9-]*$", slug):
        raise UsageError(
            f"--name {_short(slug)}: use lowercase letters, digits and dashes",
            "e.g. --name kv-cache-config",
        )
    if len(slug) > MAX_SLUG:
        raise UsageError(
            f"--name {_short(slug)}: {len(slug)} characters, at most {MAX_SLUG}",
            "a short slug names the patch file (NNNN-slug.patch); say more with --why",
        )


def _short(slug: str) -> str:
    return repr(slug) if len(slug) <= 40 else repr(slug[:32]) + "..."


def next_patch_name(folder: Path, slug: str) -> str:
    """``NNNN-slug.patch``, one past the highest number in the folder."""
    numbers = [int(p.name[:4]) for p in folder.glob("[0-9][0-9][0-9][0-9]-*.patch")]
    return f"{(max(numbers) + 1) if numbers else 1:04d}-{slug}.patch"


def record_patch(
    root: Path,
    dist: str,
    version: str,
    slug: str,
    chunks: list[str],
    why: str,
    made_by: str,
    requires: dict[str, str] | None = None,
    details: str = "",
) -> Path:
    """Write ``chunks`` (unified diffs) as the next patch of ``patches/DIST/VERSION`` and
    append its ``[[patch]]`` entry (``why``, ``requires``) to series.toml; read it back.

    The one patch writer: ``make-patch`` and ``check --fix`` both end here, so a patch made
    either way has the same layout, header and series entry.
    """
    check_slug(slug)
    folder = root / dist / version
    folder.mkdir(parents=True, exist_ok=True)
    name = next_patch_name(folder, slug)
    header = f"{why}\n\n{details}{made_by}\n\n"
    (folder / name).write_text(header + "".join(chunks), encoding="utf-8")
    series = folder / "series.toml"
    entry = f'\n[[patch]]\nfile = "{name}"\nwhy = {_toml_str(why)}\n'
    if requires:
        gates = ", ".join(f"{d} = {_toml_str(s)}" for d, s in sorted(requires.items()))
        entry += f"requires = {{ {gates} }}\n"
    with series.open("a", encoding="utf-8") as f:
        f.write(entry)
    if versions_with_series(root, dist) and load_series(root, dist, version) is None:
        raise PatchError(f"{series}: could not be read back")
    return folder / name


def _toml_str(s: str) -> str:
    import json

    return json.dumps(s)
