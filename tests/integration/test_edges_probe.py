"""Issue 35 item 9: ``probe`` showed a property by its setter (the last ``def`` of the name:
vLLM's ``KVCacheBlock.block_hash`` at the setter's line, returning ``None``). A property is
its getter: the getter's line, its return type, in the view and in ``--json``.

The target is a fresh venv (``test_patches_faults``' tinypkg) holding the module below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import make_tiny
from tests.support.cli import run_cli

PROPS = '''\
class Block:
    def __init__(self) -> None:
        self._hash = None

    @property
    def block_hash(self) -> "int | None":
        """The block's hash, once it is full."""
        return self._hash

    @block_hash.setter
    def block_hash(self, value: int) -> None:
        self._hash = value

    @block_hash.deleter
    def block_hash(self) -> None:
        self._hash = None


class Full(Block):
    @property
    def size(self) -> int:
        return 16

    @size.getter
    def size(self) -> int:  # a getter redefined: this one is the property's
        return 32
'''


@pytest.fixture
def target(tmp_path: Path) -> str:
    tiny = make_tiny(tmp_path / "venv")
    tiny.path("tinypkg/props.py").write_text(PROPS)
    return f"venv:{tiny.root}"


@pytest.mark.parametrize(
    ("qualname", "line", "returns"),
    [
        ("Block.block_hash", 6, '"int | None"'),
        ("Full.block_hash", 6, '"int | None"'),  # inherited
        ("Full.size", 25, "int"),
    ],
)
def test_a_property_is_shown_by_its_getter(
    cli_env: dict[str, str], target: str, qualname: str, line: int, returns: str
) -> None:
    r = run_cli("probe", f"tinypkg.props:{qualname}", "--json", "-t", target, env=cli_env)
    assert r.code == 0, r.err
    (sym,) = json.loads(r.out)["symbols"]
    assert (sym["kind"], sym["line"], sym["returns"]) == ("property", line, returns)
    assert [p["name"] for p in sym["parameters"]] == ["self"]
    r = run_cli("probe", f"tinypkg.props:{qualname}", "-t", target, env=cli_env)
    assert r.code == 0, r.err
    assert f"-> {returns}" in r.out and f"tinypkg/props.py:{line} " in r.out, r.out
    assert "setter" not in r.out and "deleter" not in r.out


def test_a_class_lists_its_property_once_by_its_getter(
    cli_env: dict[str, str], target: str
) -> None:
    r = run_cli("probe", "tinypkg.props:Block", "--json", "-t", target, env=cli_env)
    (sym,) = json.loads(r.out)["symbols"]
    got = [(m["qualname"], m["line"], m["returns"]) for m in sym["members"]]
    assert got == [("Block.__init__", 2, "None"), ("Block.block_hash", 6, '"int | None"')]
    r = run_cli("probe", "tinypkg.props:Block", "-t", target, env=cli_env)
    assert 'block_hash(self) -> "int | None" (property)  :6' in r.out, r.out
