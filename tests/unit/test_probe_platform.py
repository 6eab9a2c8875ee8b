"""Platform and version tests are decided as the probed interpreter decides them. Pure."""

from __future__ import annotations

import ast
import os
import sys

import pytest

from probes.signatures._astindex import _top_level_statements
from probes.signatures._platform import Decider, builtin_aliases

HERE = "posix" if "posix" in sys.builtin_module_names else "nt"
OTHER = "nt" if HERE == "posix" else "posix"


@pytest.mark.parametrize(
    ("test", "want"),
    [
        (f"{HERE!r} in _names", True),
        (f"{OTHER!r} in _names", False),
        (f"{OTHER!r} not in sys.builtin_module_names", True),
        (f"sys.platform == {sys.platform!r}", True),
        ("sys.platform == 'no-such-os'", False),
        (f"sys.platform.startswith({sys.platform[:3]!r})", True),
        (f"os.name == {os.name!r}", True),
        (f"sys.version_info >= {tuple(sys.version_info[:2])!r}", True),
        (f"sys.version_info[:2] < {tuple(sys.version_info[:2])!r}", False),
        (f"sys.version_info[0] == {sys.version_info[0]}", True),
        ("not sys.platform == 'no-such-os'", True),
        ("sys.platform == 'no-such-os' or TYPE_CHECKING", None),  # undecidable: both branches
        ("sys.platform == 'no-such-os' and TYPE_CHECKING", False),
        ("TYPE_CHECKING", None),
        ("HAS_CUDA", None),
        ("sys.maxsize > 2**32", None),
    ],
)
def test_decided_like_the_interpreter_would(test: str, want: bool | None) -> None:
    module = ast.parse(f"import sys\n_names = sys.builtin_module_names\nif {test}:\n    pass\n")
    decider = Decider(builtin_aliases(module.body))
    node = module.body[-1]
    assert isinstance(node, ast.If)
    assert decider.truth(node.test) is want


def test_only_the_branch_that_runs_binds_a_name() -> None:
    """``os.py``'s shape: ``path`` is posixpath on POSIX, ntpath on Windows, never both."""
    source = f"""
import sys
_names = sys.builtin_module_names
if {HERE!r} in _names:
    import posixpath as path
elif {OTHER!r} in _names:
    import ntpath as path
if TYPE_CHECKING:
    from typing import Any
"""
    body = _top_level_statements(ast.parse(source).body)
    imported = [(a.name, a.asname) for st in body if isinstance(st, ast.Import) for a in st.names]
    want = "posixpath" if HERE == "posix" else "ntpath"
    assert ("sys", None) in imported and (want, "path") in imported
    assert len([a for a in imported if a[1] == "path"]) == 1
    assert any(isinstance(st, ast.ImportFrom) for st in body)  # TYPE_CHECKING: still read
