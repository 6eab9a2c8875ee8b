"""``check --fix`` on real PyPI pairs: what it fixes, what it leaves, and that the rest is intact.

* speculators 0.3.0 on vLLM 0.33.0 (written for 0.11.0): the three kv-cache helpers it imports
  from ``vllm.v1.core.kv_cache_utils`` are defined in ``vllm/v1/core/kv_cache_planning.py`` in
  0.33.0 (read from the wheel below, not taken from harness); the other four errors are
  design decisions (a new required argument twice, two removed keywords that 0.11.0 read).
* imbalanced-learn 0.9.1 on scikit-learn 1.5.2 (written for 1.1): ``OneHotEncoder(sparse=...)``
  was renamed ``sparse_output`` in place (sklearn 1.2; the old name went in 1.4), same
  position, kind and default -- the fix is mechanical.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from harness.patching.diffs import apply, parse
from tests.support.cli import CliResult, run_cli
from tests.support.wheels import Wheels, ensure_wheel

pytestmark = pytest.mark.wheels

REPO_PATCHES = Path(__file__).resolve().parents[2] / "patches"
SPEC = "pypi:speculators==0.3.0,vllm==0.33.0"
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
HELPERS = (
    "_get_kv_cache_groups_uniform_spec",
    "get_kv_cache_config_from_groups",
    "unify_hybrid_kv_cache_specs",
)
IMB = "pypi:imbalanced-learn==0.9.1,scikit-learn==1.5.2"
SMOTE = "imblearn/over_sampling/_smote/base.py"


@pytest.fixture(scope="module")
def more_wheels(wheels: Wheels) -> None:
    for req in (
        "vllm==0.33.0",
        "imbalanced-learn==0.9.1",
        "scikit-learn==1.5.2",
        "scikit-learn==1.1.3",
    ):
        ensure_wheel(req)


def harness(env: dict[str, str], *args: str) -> CliResult:
    return run_cli(*args, env=env)


def unpacked(cache: str, pin: str) -> Path:
    return Path(cache) / "pypi" / pin


def changed_lines(diff: str) -> tuple[list[str], list[str]]:
    """The lines a unified diff removes and adds (its hunks' bodies, headers aside)."""
    removed: list[str] = []
    added: list[str] = []
    for fp in parse(diff, "diff"):
        for h in fp.hunks:
            removed += [line for line in h.old_lines if line not in h.new_lines]
            added += [line for line in h.new_lines if line not in h.old_lines]
    return removed, added


def module_level_defs(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_speculators_on_vllm_033_moved_helpers(
    more_wheels: None, cli_env: dict[str, str], tmp_path: Path
) -> None:
    patches = tmp_path / "patches"
    shutil.copytree(REPO_PATCHES, patches)
    r = harness(
        cli_env, "check", "speculators", "-t", SPEC, "--fix", "--json", "--patches", str(patches)
    )
    assert r.code == 1, r.err  # four errors stay with a person
    data = json.loads(r.out)
    assert data["baseline"] == {"vllm": "0.11.0"}
    assert {(f["kind"], f["symbol"]) for f in data["fixed"]} == {
        ("moved-import", f"vllm.v1.core.kv_cache_utils:{n}") for n in HELPERS
    }
    # where 0.33.0 defines them, read from the wheel itself
    planning = (
        unpacked(cli_env["HARNESS_CACHE"], "vllm-0.33.0") / "vllm/v1/core/kv_cache_planning.py"
    )
    assert set(HELPERS) <= module_level_defs(planning)
    assert not set(HELPERS) & module_level_defs(planning.with_name("kv_cache_utils.py"))

    # the patch: one line changed; every other byte of the file as the series leaves it
    patch = Path(data["patch"])
    assert patch == patches / "speculators/0.3.0/0015-check-fix.patch"  # after 0001-0014
    (fp,) = parse(patch.read_text(), str(patch))
    assert fp.path == GEN
    removed, added = changed_lines(patch.read_text())
    assert removed == ["from vllm.v1.core.kv_cache_utils import (\n"]
    assert added == ["from vllm.v1.core.kv_cache_planning import (\n"]
    pristine = (unpacked(cli_env["HARNESS_CACHE"], "speculators-0.3.0") / GEN).read_text()
    after = apply(fp, pristine).new_text
    assert after == pristine.replace(removed[0], added[0], 1)
    compile(after, GEN, "exec", dont_inherit=True)  # the target's Python is this one
    series = (patches / "speculators/0.3.0/series.toml").read_text()
    assert series.startswith((REPO_PATCHES / "speculators/0.3.0/series.toml").read_text())
    assert 'requires = { vllm = ">=0.33,<0.34" }' in series
    assert (
        all(n in data["why"] for n in HELPERS)
        and "vllm_hidden_states_generator.py:15" in data["why"]
    )

    # left to a person, each with the callee's signature and where it is
    manual = {(m["line"], m["category"], m["symbol"]): m for m in data["manual"]}
    assert set(manual) == {
        (136, "unexpected-kwarg", "vllm.v1.core.kv_cache_planning:get_kv_cache_config_from_groups"),
        (148, "missing-required-arg", "vllm.v1.core.sched.scheduler:Scheduler"),
        (194, "missing-required-arg", "vllm.config:SchedulerConfig"),
        (234, "unexpected-kwarg", "vllm.v1.request:Request"),
    }
    specs = manual[
        (136, "unexpected-kwarg", "vllm.v1.core.kv_cache_planning:get_kv_cache_config_from_groups")
    ]
    assert "vllm 0.11.0's get_kv_cache_config_from_groups read it" in specs["reason"]
    assert specs["location"].startswith("vllm/v1/core/kv_cache_planning.py:")
    assert all(m["signature"] for m in data["manual"])

    # check --with-patches now: no import errors; what is left is what the person must do
    r = harness(
        cli_env,
        "check",
        "speculators",
        "-t",
        SPEC,
        "--with-patches",
        "--patches",
        str(patches),
        "--json",
    )
    checked = json.loads(r.out)
    errors = {
        (f["line"], f["category"], f["symbol"])
        for f in checked["findings"]
        if f["severity"] == "error"
    }
    assert not [e for e in errors if e[1] == "import-missing"]
    assert errors == set(manual)
    assert any("with 0015-check-fix" in n for n in checked["notes"])


def test_imbalanced_learn_on_sklearn_15_renamed_keyword(
    more_wheels: None, cli_env: dict[str, str], tmp_path: Path
) -> None:
    patches = tmp_path / "patches"
    # the caller declares scikit-learn>=1.1.0, a range: which version it was written for is
    # the user's to say, and --fix says so in one line rather than guessing
    r = harness(cli_env, "check", "imbalanced-learn", "-t", IMB, "--fix", "--patches", str(patches))
    assert r.code == 2
    assert r.err.startswith("error: --fix needs the API imbalanced-learn was written for")
    assert "hint: name it: --baseline" in r.err and not patches.exists()

    base = ("--baseline", "scikit-learn==1.1.3")
    r = harness(
        cli_env,
        "check",
        "imbalanced-learn",
        "-t",
        IMB,
        *base,
        "--fix",
        "--json",
        "--patches",
        str(patches),
    )
    assert r.code == 1, r.err
    data = json.loads(r.out)
    # 1.5 also moved _print_elapsed_time to sklearn.utils._user_interface (its __getattr__ serves
    # only IS_PYPY): the import is moved, and pipeline.py's byte-order mark stays; 1.4 renamed
    # AdaBoostClassifier's base_estimator, which RUSBoost's super().__init__ passes (run on
    # 1.5.2: "TypeError: ... unexpected keyword argument 'base_estimator'"). Pipeline's
    # inverse_transform(Xt) -> (X=None, *, Xt=None) keeps the positional call: nothing to fix.
    boost = "imblearn/ensemble/_weight_boosting.py"
    assert [(f["kind"], f["file"], f["line"], f["symbol"]) for f in data["fixed"]] == [
        (
            "renamed-keyword",
            boost,
            146,
            "sklearn.ensemble._weight_boosting:AdaBoostClassifier.__init__",
        ),
        ("renamed-keyword", SMOTE, 510, "sklearn.preprocessing:OneHotEncoder"),
        ("moved-import", "imblearn/pipeline.py", 17, "sklearn.utils:_print_elapsed_time"),
    ]
    assert "'sparse' -> 'sparse_output'" in data["fixed"][1]["summary"]
    removed, added = changed_lines(data["diff"])
    assert added == [
        "            estimator=base_estimator,\n",
        '        self.ohe_ = OneHotEncoder(sparse_output=True, handle_unknown="ignore", '
        "dtype=dtype_ohe)\n",
        "from sklearn.utils._user_interface import _print_elapsed_time\n",
    ]
    assert removed == [
        "            base_estimator=base_estimator,\n",
        '        self.ohe_ = OneHotEncoder(sparse=True, handle_unknown="ignore", '
        "dtype=dtype_ohe)\n",
        "from sklearn.utils import _print_elapsed_time\n",
    ]
    assert data["requires"] == {"scikit-learn": ">=1.5,<1.6"}
    assert Path(data["patch"]) == patches / "imbalanced-learn/0.9.1/0001-check-fix.patch"

    r = harness(
        cli_env,
        "check",
        "imbalanced-learn",
        "-t",
        IMB,
        *base,
        "--with-patches",
        "--patches",
        str(patches),
        "--json",
    )
    checked = json.loads(r.out)
    errors = [f for f in checked["findings"] if f["severity"] == "error"]
    assert not [f for f in errors if f["symbol"] == "sklearn.preprocessing:OneHotEncoder"]
    before = {(m["file"], m["line"], m["symbol"]) for m in data["manual"]}
    # what --fix left for a hand is what check still says -- and the base_estimator_ the
    # keyword's rename took with it (sklearn 1.4), which the fix names and check alone does not
    hand = (boost, 198, "sklearn.ensemble._weight_boosting:AdaBoostClassifier.base_estimator_")
    assert {(f["file"], f["line"], f["symbol"]) for f in errors} == before - {hand}
    assert hand in before


def test_where_the_series_already_covers_the_breaks_there_is_nothing_to_write(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """speculators on vLLM 0.16.0: the shipped series fixes every error; --fix adds nothing."""
    patches = tmp_path / "patches"
    shutil.copytree(REPO_PATCHES, patches)
    spec = "pypi:speculators==0.3.0,vllm==0.16.0"
    r = harness(cli_env, "check", "speculators", "-t", spec, "--fix", "--patches", str(patches))
    assert r.code == 0, r.err
    assert "no errors: nothing to fix, nothing written" in r.out
    assert sorted(p.name for p in (patches / "speculators/0.3.0").iterdir()) == sorted(
        p.name for p in (REPO_PATCHES / "speculators/0.3.0").iterdir()
    )
