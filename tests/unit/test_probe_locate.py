"""The probes behind ``check --fix``, run in-process on handwritten packages.

``locate``: where a name is defined now, what a module defines, which parameters a body reads.
``fixscan``: a scan of some files only must find what the whole scan finds in them.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.checker import Checker
from harness.analysis.scan import Scan
from probes.callsites import fixscan
from probes.signatures import _astindex, locate

PAIRS = Path(__file__).resolve().parents[1] / "fixtures" / "fixpairs"
SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"


@pytest.fixture(autouse=True)
def _no_leaked_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_astindex, "OVERRIDES", {})
    monkeypatch.setattr(_astindex, "_REAL", {})


def run(paths: list[Path], **args: Any) -> dict[str, Any]:
    warnings: list[str] = []
    data = locate.run({"paths": [str(p) for p in paths], **args}, warnings.append)
    assert warnings == []
    return data


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def test_defined_finds_every_module_level_definition_of_a_name() -> None:
    data = run(
        [PAIRS / "movelib-2.0.0"],
        tops=["movelib"],
        names=["parse", "twice", "shape", "helper_gone"],
    )
    where = {n: sorted((s["module"], s["kind"]) for s in got) for n, got in data["defined"].items()}
    assert where == {
        "parse": [("movelib.text.parsing", "function")],
        "twice": [("movelib.fast", "function"), ("movelib.slow", "function")],
        "shape": [("movelib.shapes", "class")],
        "helper_gone": [],
    }


def test_defined_ignores_methods_nested_defs_and_test_packages(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": """
                class C:
                    def name(self):
                        pass

                def outer():
                    def name():
                        pass
                """,
            "pkg/tests/__init__.py": "",
            "pkg/tests/test_x.py": "def name():\n    pass\n",
            "pkg/b.py": "if True:\n    def name(x):\n        return x\n",
        },
    )
    data = run([tmp_path], tops=["pkg"], names=["name"])
    assert [(s["module"], s["parameters"][0]["name"]) for s in data["defined"]["name"]] == [
        ("pkg.b", "x")
    ]


def test_reads_are_the_parameters_a_body_reads(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/m.py": """
                import functools
                from dataclasses import dataclass

                def plain(a, b, unused=1, *args, gone=None, **kw):
                    b = 2          # a store is not a read
                    return a + len(args) + len(kw)

                def nested(a, b):
                    def inner():
                        return b   # read in a closure: read
                    return inner

                @functools.lru_cache
                def decorated(a, b):
                    return a

                def dynamic(a, b):
                    return locals()

                class Own:
                    def __init__(self, size, legacy=None):
                        self.size = size

                @dataclass
                class Fields:
                    x: int = 0

                class Methods:
                    @staticmethod
                    def s(a, b):
                        return a
                """,
        },
    )
    refs = [
        ["lib.m", q]
        for q in ("plain", "nested", "decorated", "dynamic", "Own", "Fields", "Methods.s")
    ]
    data = run([tmp_path], refs=refs, reads=True)
    reads = {k.split(":")[1]: v.get("reads") for k, v in data["symbols"].items()}
    assert reads == {
        "plain": ["a", "args", "kw"],
        "nested": ["b"],
        "decorated": None,  # the decorator sees the arguments
        "dynamic": None,  # locals(): anything may be read
        "Own": ["self", "size"],  # its own __init__
        "Fields": None,  # a synthesised constructor stores every field
        "Methods.s": ["a"],  # staticmethod passes the call through
    }


def test_modules_list_names_describe_only_new_ones_and_say_what_a_package_serves() -> None:
    data = run(
        [PAIRS / "renamelib-2.0.0"],
        modules=[["renamelib.api", ["renamelib", "renamelib.api"], ["build", "create"]]],
    )
    m = data["modules"]["renamelib.api"]
    assert m["names"] == [
        "ClientSession",
        "Converter",
        "build",
        "create",
        "encode",
        "read_config",
        "segment",
    ]
    assert sorted(m["defs"]) == ["ClientSession", "Converter", "encode", "read_config", "segment"]
    assert sorted(m["exported"]["renamelib"]) == sorted(m["defs"])  # the package re-exports
    assert m["defs"]["ClientSession"]["members"][0]["qualname"] == "ClientSession.__init__"
    assert run([PAIRS / "renamelib-2.0.0"], modules=[["renamelib.gone", ["renamelib"], []]])[
        "modules"
    ] == {"renamelib.gone": None}


def test_an_override_is_found_through_a_symlinked_import_path(tmp_path: Path) -> None:
    """patchops names files by their real path; the import path may run through a link."""
    real = write(tmp_path / "real", {"pkg/__init__.py": "", "pkg/m.py": "def old():\n    pass\n"})
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    _astindex.OVERRIDES[str(real / "pkg" / "m.py")] = "def new():\n    pass\n"
    data = run([tmp_path / "link"], tops=["pkg"], names=["old", "new"])
    assert [s["qualname"] for s in data["defined"]["new"]] == ["new"]
    assert data["defined"]["old"] == []


def test_fixscan_finds_in_its_files_what_the_whole_scan_finds() -> None:
    from probes.callsites import callsites

    def findings(scan: dict[str, Any]) -> list[tuple[str, int, str, str]]:
        return [
            (f.file, f.line, f.category, f.symbol)
            for f in Checker(Scan.from_dict(scan), {"calleepkg": "1.2.3"}).run()
            if f.severity == "error"
        ]

    args = {"caller": "callerpkg", "callees": None, "paths": [str(SITE)]}
    whole = findings(callsites.run(args, lambda m: None))
    files = sorted({f[0] for f in whole})
    assert len(files) >= 1
    one = findings(fixscan.run({**args, "only": [files[0]]}, lambda m: None))
    assert one == [f for f in whole if f[0] == files[0]]
    assert one  # the file has errors, so the comparison means something


def test_compiles_names_the_file_and_line_that_do_not_compile() -> None:
    from probes import compiles

    data = compiles.run({"files": {"ok.py": "x = 1\n", "bad.py": "x = 1\ny = (\n"}}, print)
    assert set(data["errors"]) == {"bad.py"}
    assert data["errors"]["bad.py"]["line"] == 2
    assert data["python"].count(".") == 2
