"""What a failed guarded import leaves unbound: the pure decisions, by table.

``try: from vllm.utils import get_open_port / from trl... import chunk_list / except
ImportError: pass`` (ms-swift 3.6.4's ``rollout.py``): on vLLM 0.16.0 the first import raises,
so the second never runs -- ``chunk_list`` is as unbound as ``get_open_port``.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from harness.analysis.rules.imports import unbound_message
from harness.analysis.uses import ImportUse
from probes.callsites._guards import fallback_try, skipped


def skipped_of(src: str, failing: str) -> list[tuple[str, int]]:
    """``skipped`` for the first ``try`` of ``src`` when the name ``failing`` fails."""
    tree = ast.parse(textwrap.dedent(src))
    guard = next(n for n in ast.walk(tree) if isinstance(n, ast.Try))
    for node in ast.walk(guard):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if failing in names:
                return skipped(guard, node, names.index(failing))
    raise AssertionError(f"no import of {failing}")


@pytest.mark.parametrize(
    ("src", "failing", "expect"),
    [
        # ms-swift 3.6.4: the next import of the try never runs
        (
            """
            try:
                from vllm.utils import get_open_port
                from trl.scripts.vllm_serve import chunk_list
            except ImportError:
                pass
            """,
            "get_open_port",
            [("chunk_list", 4)],
        ),
        # one statement: names before the failing one are bound, those after are not
        ("try:\n from m import a, b, c as d\nexcept ImportError: pass", "b", [("d", 2)]),
        ("try:\n from m import a, b\nexcept ImportError: pass", "b", []),
        # flags, defs, classes, tuple targets; an attribute store binds no name
        (
            """
            try:
                from m import a
                HAS_M = True
                x, (y, z) = 1, (2, 3)
                m.attr = 1
                def helper(): import inner
                class Kind: pass
            except ImportError:
                pass
            """,
            "a",
            [("HAS_M", 4), ("x", 5), ("y", 5), ("z", 5), ("helper", 7), ("Kind", 8)],
        ),
        # inside an if: the rest of its block, then the rest of the try; never the else branch
        (
            """
            try:
                if new:
                    from m import a
                    import m.sub as sub
                else:
                    from old import other
                from n import later
            except ImportError:
                pass
            """,
            "a",
            [("sub", 5), ("later", 8)],
        ),
        # a nested block after the import: whatever it binds, in any of its branches
        (
            """
            try:
                from m import a
                if cond:
                    b = 1
                else:
                    c = 2
                with ctx():
                    import d
            except ImportError:
                pass
            """,
            "a",
            [("b", 5), ("c", 7), ("d", 9)],
        ),
        # the last statement of the try: nothing after it
        ("try:\n import m\n from m import a\nexcept ImportError: pass", "a", []),
    ],
)
def test_what_the_rest_of_the_try_would_have_bound(
    src: str, failing: str, expect: list[tuple[str, int]]
) -> None:
    assert skipped_of(src, failing) == expect


USE = ImportUse(
    file="swift/llm/infer/rollout.py", line=30, module="vllm.utils", name="get_open_port"
)


@pytest.mark.parametrize(
    ("name", "via", "expect"),
    [
        (
            "get_open_port",
            None,
            "name 'get_open_port' is not defined: `from vllm.utils import get_open_port` "
            "(line 30) fails on vllm 0.16.0 and the except branch binds nothing",
        ),
        (
            "chunk_list",
            31,
            "name 'chunk_list' is not defined: `from vllm.utils import get_open_port` "
            "(line 30) fails on vllm 0.16.0 before line 31 binds it, and the except branch "
            "binds nothing",
        ),
        (
            "other",
            30,
            "name 'other' is not defined: `from vllm.utils import get_open_port` (line 30) "
            "fails on vllm 0.16.0 before the same statement binds it, and the except branch "
            "binds nothing",
        ),
    ],
)
def test_the_words_of_an_unbound_name(name: str, via: int | None, expect: str) -> None:
    assert unbound_message(name, USE, "vllm 0.16.0", via) == expect


@pytest.mark.parametrize(
    ("handler", "expect"),
    [
        ("except ImportError:", True),  # ms-swift 3.12.6's LoRAModel: runs only if :907 fails
        ("except ModuleNotFoundError:", True),
        ("except (ImportError, ModuleNotFoundError):", True),
        ("except Exception:", False),  # anything in the body may raise and run it
        ("except (ImportError, AttributeError):", False),
        ("except:", False),
    ],
)
def test_a_fallback_import_runs_only_when_the_try_raises_import_error(
    handler: str, expect: bool
) -> None:
    src = f"try:\n    from m import a\n{handler}\n    from m.old import a\n"
    tree = ast.parse(src)
    guard = tree.body[0]
    assert isinstance(guard, ast.Try)
    node = guard.handlers[0].body[0]
    assert (fallback_try(tree, node) is guard) is expect
    assert fallback_try(tree, guard.body[0]) is None  # the body's own import is no fallback
