"""Modules a package's ``__init__`` makes by a function (transformers 5's
``_create_module_alias``): which calls make an alias, and what it forwards to -- by table."""

from __future__ import annotations

import ast
import textwrap

import pytest

from probes.signatures._module_alias import absolute, aliases, factories

# transformers 5.17.0's __init__.py:824-851, shortened: the factory is defined and called in
# the ``else`` of ``if TYPE_CHECKING``, and in a loop whose arguments are computed
TRANSFORMERS = """
import importlib, sys, types
if TYPE_CHECKING:
    from .tokenization_python import PreTrainedTokenizer
else:
    def _create_module_alias(alias: str, target: str) -> None:
        module = types.ModuleType(alias)
        def _get_target():
            return importlib.import_module(target, __name__)
        module.__getattr__ = lambda name: getattr(_get_target(), name)
        sys.modules[alias] = module
    _create_module_alias(f"{__name__}.tokenization_utils_fast", ".tokenization_utils_tokenizers")
    _create_module_alias(f"{__name__}.tokenization_utils", ".tokenization_utils_sentencepiece")
    for _proc_file in files:
        _create_module_alias(f"{__name__}.models.{_model}.{_module}_fast", _target)
"""


TF = "transformers"


def made(src: str, package: str = "transformers") -> dict[str, str]:
    return aliases(ast.parse(textwrap.dedent(src)), package)


@pytest.mark.parametrize(
    ("src", "expect"),
    [
        (
            TRANSFORMERS,
            {
                f"{TF}.tokenization_utils_fast": f"{TF}.tokenization_utils_tokenizers",
                f"{TF}.tokenization_utils": f"{TF}.tokenization_utils_sentencepiece",
            },
        ),
        # literal strings and an absolute target
        (
            """
            import importlib, sys
            def alias(name, to):
                sys.modules[name] = importlib.import_module(to)
            alias("pkg.old", "pkg.new.place")
            """,
            {"pkg.old": "pkg.new.place"},
        ),
        # the arguments the other way round: the parameters say which is which
        (
            """
            import importlib, sys
            def alias(to, name):
                sys.modules[name] = importlib.import_module(to)
            alias("..up", f"{__name__}.old")
            """,
            {"transformers.old": "up"},
        ),
        # a function that only stores into sys.modules (no forwarding import): no alias
        (
            """
            import sys, types
            def register(name, doc):
                sys.modules[name] = types.ModuleType(doc)
            register("transformers.made", "x")
            """,
            {},
        ),
        # a call inside another function's body runs only if that function is called
        (
            """
            import importlib, sys
            def alias(name, to):
                sys.modules[name] = importlib.import_module(to)
            def later():
                alias("transformers.maybe", ".x")
            """,
            {},
        ),
        # an f-string of anything but __name__ is not a known string
        (
            """
            import importlib, sys
            def alias(name, to):
                sys.modules[name] = importlib.import_module(to)
            alias(f"{prefix}.old", ".new")
            """,
            {},
        ),
    ],
)
def test_which_calls_make_an_alias(src: str, expect: dict[str, str]) -> None:
    assert made(src) == expect


def test_the_factory_is_known_by_what_it_does() -> None:
    tree = ast.parse(TRANSFORMERS)
    assert factories(tree) == {"_create_module_alias": (0, 1)}


@pytest.mark.parametrize(
    ("target", "package", "expect"),
    [
        (
            ".tokenization_utils_sentencepiece",
            "transformers",
            "transformers.tokenization_utils_sentencepiece",
        ),
        (
            ".models.llama.image_processing_llama",
            "transformers",
            "transformers.models.llama.image_processing_llama",
        ),
        ("..other", "pkg.sub", "pkg.other"),
        ("absolute.mod", "pkg", "absolute.mod"),
    ],
)
def test_the_target_is_import_modules(target: str, package: str, expect: str) -> None:
    assert absolute(target, package) == expect
