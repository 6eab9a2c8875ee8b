"""The series library (each series.toml read once) and the texts a series leaves. Pure."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.patching import series as series_mod
from harness.patching.diffs import parse, unified
from harness.patching.library import SeriesLibrary
from harness.patching.manifest import NONE
from harness.patching.ops import DistReport
from harness.patching.overlay import Overlay, overlay
from harness.patching.plan import LiveFile, plan_apply, sha
from harness.patching.series import PatchSpec, Series

A0, A1 = "a\nb\n", "a\nB\n"
C0 = "c\n"


def _series_dir(root: Path, dist: str, version: str, requires: str = "") -> None:
    folder = root / dist / version
    folder.mkdir(parents=True)
    (folder / "0001-x.patch").write_text(unified(f"{dist}/a.py", A0, A1))
    gate = f"requires = {{ {requires} }}\n" if requires else ""
    (folder / "series.toml").write_text(f'[[patch]]\nfile = "0001-x.patch"\nwhy = "w"\n{gate}')


@pytest.fixture
def root(tmp_path: Path) -> Path:
    _series_dir(tmp_path, "pkg", "1.0", 'vllm = ">=0.16"')
    _series_dir(tmp_path, "pkg", "2.0", 'torch = ">=2"')
    _series_dir(tmp_path, "other", "0.1")
    return tmp_path


def test_library_answers(root: Path) -> None:
    lib = SeriesLibrary(root)
    assert lib.dists() == ["other", "pkg"]
    assert lib.versions("pkg") == ["1.0", "2.0"] and lib.versions("nope") == []
    assert lib.required_dists(["pkg"]) == ["torch", "vllm"]
    assert lib.required_dists(["other"]) == []
    got = lib.series_for("pkg", "1.0")
    assert got is not None and [p.id for p in got.patches] == ["0001-x"]
    assert lib.series_for("pkg", None) is None and lib.series_for("pkg", "9.9") is None
    assert SeriesLibrary.of(lib) is lib and SeriesLibrary.of(root).root == root


def test_each_series_is_read_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[tuple[str, str]] = []
    real = series_mod.load_series

    def counting(r: Path, dist: str, version: str) -> Series | None:
        reads.append((dist, version))
        return real(r, dist, version)

    listed: list[Path] = []
    real_dists = series_mod.dists_with_series

    def listing(r: Path) -> list[str]:
        listed.append(r)
        return real_dists(r)

    monkeypatch.setattr("harness.patching.library.load_series", counting)
    monkeypatch.setattr("harness.patching.library.dists_with_series", listing)
    lib = SeriesLibrary(root)
    lib.required_dists(lib.dists())
    lib.series_for("pkg", "1.0")
    lib.required_dists(["pkg"])
    assert lib.chosen() == lib.dists() == ["other", "pkg"]
    assert sorted(reads) == [("other", "0.1"), ("pkg", "1.0"), ("pkg", "2.0")]
    assert listed == [root]


@pytest.mark.parametrize(
    ("only", "want"),
    [(None, ["other", "pkg"]), ("pkg", ["pkg"]), ("absent", ["absent"])],
)
def test_chosen(root: Path, only: str | None, want: list[str]) -> None:
    assert SeriesLibrary(root).chosen(only) == want


def test_chosen_without_any_series(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no patch series under"):
        SeriesLibrary(tmp_path / "patches").chosen()
    assert SeriesLibrary(tmp_path).chosen("pkg") == ["pkg"]


# -- the texts a series leaves ---------------------------------------------------------------


def _report(dist: str, live_a: str, root: str | None = "/site") -> DistReport:
    gone = f"--- a/{dist}/c.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-c\n"  # the series deletes it
    diff = unified(f"{dist}/a.py", A0, A1) + gone
    spec = PatchSpec("0001-x", Path("0001-x.patch"), "w", (), diff, tuple(parse(diff, "x")))
    series = Series(dist, "1.0", Path("."), (spec,))
    live = {
        f"{dist}/a.py": LiveFile(f"{dist}/a.py", live_a, sha(live_a), 0o644, sha(A0)),
        f"{dist}/c.py": LiveFile(f"{dist}/c.py", C0, sha(C0), 0o644, sha(C0)),
    }
    plan = plan_apply(series, live, {dist: "1.0"}, NONE)
    return DistReport(dist, "1.0", ["1.0"], plan, [], root=root)


@pytest.mark.parametrize(
    ("reports", "texts", "notes"),
    [
        ([], {}, ()),
        ([DistReport("pkg", None, ["1.0"], None, [], note="pkg is not installed on t")], {},
         ("--with-patches: pkg is not installed on t",)),
        ([_report("pkg", A0)], {"/site/pkg/a.py": A1},
         ("--with-patches: pkg 1.0 series: with 0001-x",)),
        ([_report("pkg", A0, root=None)], {},
         ("--with-patches: pkg 1.0 series: with 0001-x",)),
        ([_report("pkg", "x\n")], {},
         ("--with-patches: the pkg series does not apply cleanly; checked without the "
          "conflicting patches",
          "--with-patches: pkg 1.0 series: with none; without 0001-x (conflicts: 1 hunk(s) do "
          "not match)")),
    ],
)  # fmt: skip
def test_overlay_texts_and_notes(
    reports: list[DistReport], texts: dict[str, str], notes: tuple[str, ...]
) -> None:
    got = overlay(reports)
    assert got.texts() == texts and got.notes == notes


def test_overlay_of_and_without_use_the_dist_name_either_way() -> None:
    got = overlay([_report("my_pkg", A0), _report("other", A0, root="/o")])
    assert got.of("My-Pkg") == {"my_pkg/a.py": A1, "my_pkg/c.py": None}  # None: deleted
    assert got.without("my-pkg").texts() == {"/o/other/a.py": A1}
    assert got.without("my-pkg").notes == got.notes
    assert Overlay().texts() == {} and Overlay().of("x") == {}


@pytest.mark.parametrize(
    ("report", "want"),
    [
        (_report("pkg", A0), None),
        (DistReport("pkg", None, [], None, []), None),
        (_report("pkg", "x\n"), "0001-x (1 hunk(s) do not match)"),
    ],
)
def test_unclean(report: DistReport, want: str | None) -> None:
    assert report.unclean() == want
