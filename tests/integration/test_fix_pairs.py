"""``harness check --fix`` on handwritten caller/callee pairs, one per fix kind, as a user runs it.

Each pair (``tests/fixtures/fixpairs``) is a real wheel read through ``pypi:``: the caller pins
the callee version it was written for (``Requires-Dist: lib==1.0.0``), the target has 2.0.0.
Each pair also holds the negatives of its kind, which must be left to a person, never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.patching.diffs import unified
from tests.support.cli import CliResult, run_cli
from tests.support.fixpairs import FIXPAIRS


@pytest.fixture
def env(fixpairs_env: dict[str, str]) -> dict[str, str]:
    return fixpairs_env


def target(kind: str) -> str:
    return f"pypi:{kind}app==0.1.0,{kind}lib==2.0.0"


def harness(env: dict[str, str], *args: str) -> CliResult:
    return run_cli(*args, env=env)


def fix_json(env: dict[str, str], kind: str, patches: Path, *extra: str) -> dict:
    r = harness(
        env,
        "check",
        f"{kind}app",
        "-t",
        target(kind),
        "--fix",
        "--json",
        "--patches",
        str(patches),
        *extra,
    )
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def original(kind: str) -> str:
    return (FIXPAIRS / f"{kind}app-0.1.0" / f"{kind}app" / "uses.py").read_text()


# What each pair's uses.py must read after the fix: the input with only the fixed names
# changed. Everything a person must decide stays exactly as it was.
EXPECTED = {
    "move": original("move")
    .replace(
        "    parse,\n    Reader,\n)\n",
        ")\nfrom movelib.text.parsing import parse\nfrom movelib.io import Reader\n",
    )
    .replace("from movelib.util import compress", "from movelib.io import compress"),
    "kw": original("kw")
    .replace('connect("h", timeout=5)', 'connect("h", timeout_s=5)')
    .replace("verbose=True", "log_verbose=True")
    .replace("flush=False", "flush_now=False")
    .replace("timeout=1,", "timeout_s=1,"),
    "rename": original("rename")
    .replace("import Session", "import ClientSession")
    .replace('"Session") -> Session:', '"ClientSession") -> ClientSession:')
    .replace("= Session(url", "= ClientSession(url")
    .replace("load_config as lc", "read_config as lc"),
    "drop": original("drop")
    .replace('get("u", verbose=True)', 'get("u")')
    .replace('opts = {"verbose": True}', "opts = {}")
    .replace("Pool(4, legacy=None)", "Pool(4)"),
}
FIXED = {
    "move": {
        ("moved-import", "movelib.util:parse"),
        ("moved-import", "movelib.util:Reader"),
        # a guarded import whose name is used unguarded (unbound-name): the import moves
        ("moved-import", "movelib.util:compress"),
    },
    "kw": {
        ("renamed-keyword", "kwlib.client:connect"),
        ("renamed-keyword", "kwlib.client:Client"),
        ("renamed-keyword", "kwlib.client:Client.send"),
    },
    "rename": {
        ("renamed-symbol", "renamelib:Session"),
        ("renamed-symbol", "renamelib.api:load_config"),
    },
    "drop": {("dropped-keyword", "droplib.net:get"), ("dropped-keyword", "droplib.net:Pool")},
}
# the negatives: (symbol, a phrase of the reason)
MANUAL = {
    "move": {
        ("movelib.util:twice", "is defined in 2 modules"),  # ambiguous move
        ("movelib.util:shape", "another kind is not a move"),  # changed kind
        ("movelib.util:needy", "new required parameter 'y'"),  # incompatible signature
    },
    "kw": {
        ("kwlib.client:Client.close", "the names are unrelated"),
        ("kwlib.client:fetch", "its default changed"),
        ("kwlib.client:connect", "the names say the meaning flipped"),
    },
    "rename": {
        ("renamelib.api:make", "2 new names there have its shape: build, create"),  # two candidates
        ("renamelib.api:convert", "another kind is not a rename"),  # changed kind
        ("renamelib.api:tokenize", "the names are unrelated"),
        ("renamelib.api:encode_a", "encode_a and encode_b left renamelib.api with the same shape"),
    },
    "drop": {
        ("droplib.net:Pool", 'the call passes legacy="x", not the old default None'),
        ("droplib.net:post", "droplib 1.0.0 read it"),
    },
}


@pytest.mark.parametrize("kind", ["move", "kw", "rename", "drop"])
def test_fix_writes_the_certain_edits_as_the_next_patch(
    env: dict[str, str], tmp_path: Path, kind: str
) -> None:
    patches = tmp_path / "patches"
    data = fix_json(env, kind, patches)
    assert {(f["kind"], f["symbol"]) for f in data["fixed"]} == FIXED[kind]
    manual = data["manual"]
    for symbol, phrase in MANUAL[kind]:
        assert any(m["symbol"] == symbol and phrase in m["reason"] for m in manual), (
            symbol,
            manual,
        )
    assert len(manual) == len(MANUAL[kind])
    assert all(m["signature"] or m["location"] for m in manual)  # the callee, for the person

    # the patch: series.toml names each fixed finding and gates it on the callee's minor series
    folder = patches / f"{kind}app" / "0.1.0"
    assert data["patch"] == str(folder / "0001-check-fix.patch")
    series = (folder / "series.toml").read_text()
    assert 'file = "0001-check-fix.patch"' in series
    assert f'requires = {{ {kind}lib = ">=2.0,<2.1" }}' in series
    assert all(f"uses.py:{f['line']}" in data["why"] for f in data["fixed"])
    rel = f"{kind}app/uses.py"
    assert data["diff"] == unified(rel, original(kind), EXPECTED[kind])
    assert (folder / "0001-check-fix.patch").read_text().endswith(data["diff"])

    # what the series guarantees holds for it: `patches` shows it, the check re-checks with it
    r = harness(env, "patches", "-t", target(kind), "--patches", str(patches))
    assert r.code == 0, r.err
    assert "applies cleanly  0001-check-fix" in r.out
    r = harness(
        env,
        "check",
        f"{kind}app",
        "-t",
        target(kind),
        "--with-patches",
        "--patches",
        str(patches),
        "--json",
    )
    after = json.loads(r.out)
    errors = {(f["line"], f["symbol"]) for f in after["findings"] if f["severity"] == "error"}
    assert errors == {(m["line"], m["symbol"]) for m in manual}

    # and a second --fix finds nothing more to do: nothing written
    again = fix_json(env, kind, patches)
    assert again["fixed"] == [] and again["patch"] is None
    assert sorted(p.name for p in folder.glob("*.patch")) == ["0001-check-fix.patch"]


def test_dry_run_prints_the_diff_and_writes_nothing(env: dict[str, str], tmp_path: Path) -> None:
    patches = tmp_path / "patches"
    r = harness(
        env,
        "check",
        "dropapp",
        "-t",
        target("drop"),
        "--fix",
        "--dry-run",
        "--patches",
        str(patches),
    )
    assert r.code == 1, r.err  # two findings still need a person
    assert '-    get("u", verbose=True)' in r.out and '+    get("u")' in r.out
    assert "needs a person (2)" in r.out and "dry run: nothing written" in r.out
    assert not patches.exists()


def test_fix_stacks_on_what_the_series_already_changes(env: dict[str, str], tmp_path: Path) -> None:
    """An earlier patch edits the same file: the fix is made on its result, and both apply."""
    patches = tmp_path / "patches"
    folder = patches / "moveapp" / "0.1.0"
    folder.mkdir(parents=True)
    text = original("move")
    noted = text.replace('"""\n\nfrom', '"""\n\n# reviewed for movelib 2\nfrom', 1)
    (folder / "0001-note.patch").write_text("a note\n\n" + unified("moveapp/uses.py", text, noted))
    (folder / "series.toml").write_text('[[patch]]\nfile = "0001-note.patch"\nwhy = "a note"\n')
    data = fix_json(env, "move", patches, "--name", "movelib-2-imports")
    assert data["patch"] == str(folder / "0002-movelib-2-imports.patch")
    assert data["diff"] == unified(
        "moveapp/uses.py",
        noted,
        EXPECTED["move"].replace('"""\n\nfrom', '"""\n\n# reviewed for movelib 2\nfrom', 1),
    )
    r = harness(env, "patches", "-t", target("move"), "--patches", str(patches))
    assert (
        "applies cleanly  0001-note" in r.out and "applies cleanly  0002-movelib-2-imports" in r.out
    )
    # the review shows the new patch's diff
    r = harness(env, "report", "-t", target("move"), "--patches", str(patches), "--format", "md")
    assert "0002-movelib-2-imports" in r.out and "+from movelib.io import Reader" in r.out


def test_a_series_that_does_not_apply_cleanly_is_refused_and_nothing_written(
    env: dict[str, str], tmp_path: Path
) -> None:
    patches = tmp_path / "patches"
    folder = patches / "moveapp" / "0.1.0"
    folder.mkdir(parents=True)
    text = original("move")
    wrong = unified(
        "moveapp/uses.py", text.replace("helper,", "helperX,"), text.replace("helper,", "helperY,")
    )
    (folder / "0001-stale.patch").write_text(wrong)
    series = '[[patch]]\nfile = "0001-stale.patch"\nwhy = "written for other code"\n'
    (folder / "series.toml").write_text(series)
    r = harness(env, "check", "moveapp", "-t", target("move"), "--fix", "--patches", str(patches))
    assert r.code == 2
    lines = [line for line in r.err.splitlines() if line.strip()]
    assert (
        lines[0].startswith("error: ")
        and "does not apply cleanly" in lines[0]
        and "0001-stale" in lines[0]
    )
    assert lines[1].startswith("hint: ") and "harness patches" in lines[1]
    assert "Traceback" not in r.err
    assert (folder / "series.toml").read_text() == series
    assert sorted(p.name for p in folder.iterdir()) == ["0001-stale.patch", "series.toml"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dry-run"], "--dry-run, --name and --requires go with --fix"),
        (["--fix", "--name", "Not_A_Slug"], "--name 'Not_A_Slug': use lowercase letters"),
        (["--fix", "--no-baseline"], "--fix compares the installed API with the one the caller"),
        (["--fix", "--requires", "movelib"], "--requires 'movelib': expected NAME followed by"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    env: dict[str, str], tmp_path: Path, args: list[str], message: str
) -> None:
    patches = tmp_path / "patches"
    r = harness(env, "check", "moveapp", "-t", target("move"), "--patches", str(patches), *args)
    assert r.code == 2, (r.out, r.err)
    assert r.err.splitlines()[0].startswith("error: ")
    assert message in r.err and "Traceback" not in r.err
    assert not patches.exists()


def test_requires_overrides_the_gate(env: dict[str, str], tmp_path: Path) -> None:
    patches = tmp_path / "patches"
    data = fix_json(env, "drop", patches, "--requires", "droplib>=2.0,<4")
    assert data["requires"] == {"droplib": ">=2.0,<4"}
    assert (
        'requires = { droplib = ">=2.0,<4" }'
        in (patches / "dropapp" / "0.1.0" / "series.toml").read_text()
    )


def test_on_a_writable_target_the_patch_applies_and_the_errors_are_gone(
    env: dict[str, str], fixpairs_cache: Path, tmp_path: Path
) -> None:
    """A venv stands in for the GPU box: fix, apply-patches, check the live files, revert."""
    from tests.support.fixpairs import install

    wheels = fixpairs_cache / "wheels"
    site = install(
        tmp_path / "box",
        [wheels / "kwapp-0.1.0-py3-none-any.whl", wheels / "kwlib-2.0.0-py3-none-any.whl"],
    )
    box, patches = f"venv:{tmp_path / 'box'}", tmp_path / "patches"
    before = (site / "kwapp/uses.py").read_bytes()
    r = harness(env, "check", "kwapp", "-t", box, "--fix", "--json", "--patches", str(patches))
    assert r.code == 1, r.err
    data = json.loads(r.out)
    assert (site / "kwapp/uses.py").read_bytes() == before  # --fix writes only patches/
    r = harness(env, "apply-patches", "-t", box, "--patches", str(patches))
    assert r.code == 0, r.err
    assert (site / "kwapp/uses.py").read_text() == EXPECTED["kw"]
    r = harness(env, "check", "kwapp", "-t", box, "--json")
    live = json.loads(r.out)
    errors = {(f["line"], f["symbol"]) for f in live["findings"] if f["severity"] == "error"}
    assert errors == {(m["line"], m["symbol"]) for m in data["manual"]}
    r = harness(env, "revert-patches", "-t", box, "--patches", str(patches))
    assert r.code == 0, r.err
    assert (site / "kwapp/uses.py").read_bytes() == before
