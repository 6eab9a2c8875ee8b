"""A dist's series stays inside that dist (item 3 of issue 10): the pure decision, by table."""

from __future__ import annotations

import pytest

from harness.errors import PatchError
from harness.patching.diffs import check_path
from harness.patching.ownership import Ownership, packages_of, refusal

RECORD = frozenset(
    {
        "speculators/__init__.py",
        "speculators/train/loop.py",
        "speculators-0.3.0.dist-info/METADATA",
        "speculators-0.3.0.dist-info/RECORD",
        "speculators_init.pth",
        "../../../bin/speculators",
    }
)
OWN = Ownership(
    "speculators",
    RECORD,
    owners={"vllm/config.py": "vllm", "torch/bin/torch_shm_manager": "torch"},
    created=frozenset({"speculators/plugins/extra.py"}),
)


@pytest.mark.parametrize(
    ("path", "exists", "why"),
    [
        ("speculators/train/loop.py", True, None),  # its RECORD lists it
        ("speculators/new_module.py", False, None),  # new, inside its own package
        ("speculators/plugins/extra.py", True, None),  # harness created it for this dist
        ("vllm/config.py", True, "belongs to vllm (its RECORD lists it), not speculators"),
        ("torch/bin/torch_shm_manager", True, "belongs to torch"),
        ("speculators_init.pth", True, "is a .pth file"),  # even its own
        ("speculators/evil.pth", False, "is a .pth file"),
        ("sitecustomize.py", False, "is sitecustomize.py"),
        ("speculators/usercustomize.py", False, "is usercustomize.py"),
        ("six.py", False, "is at the top of site-packages"),
        ("speculators-0.3.0.dist-info/METADATA", True, "is install metadata (.dist-info)"),
        ("vllm-0.16.0.dist-info/RECORD", True, "is install metadata"),
        ("speculators/cache.py", True, "is not a file speculators installed"),
        ("newpkg/__init__.py", False, "would create a file outside speculators's packages"),
    ],
)
def test_what_a_series_may_write(path: str, exists: bool, why: str | None) -> None:
    got = refusal(path, exists, OWN)
    if why is None:
        assert got is None
    else:
        assert got is not None and why in got


def test_packages_are_the_record_folders_without_metadata_or_scripts() -> None:
    assert packages_of(RECORD) == {"speculators"}
    assert packages_of(["a.py", "pkg/__pycache__/x.pyc", "x.data/scripts/y"]) == {"pkg"}


def test_no_record_means_nothing_may_be_created() -> None:
    bare = Ownership("speculators", frozenset(), {})
    assert "(none (no RECORD))" in (refusal("speculators/x.py", False, bare) or "")


@pytest.mark.parametrize("path", ["../../../bin/speculators", "speculators/../../../bin/x"])
def test_bin_executables_are_out_of_reach(path: str) -> None:
    with pytest.raises(PatchError) as err:
        check_path(path, "0001-x.patch:3")
    assert "leaves site-packages" in err.value.message
    assert "bin/" in (err.value.hint or "")
