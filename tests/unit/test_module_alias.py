"""Modules a package's ``__init__`` makes by a function (transformers 5's
``_create_module_alias``): which calls make an alias, and what it forwards to -- by table."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from probes.signatures._module_alias import absolute, aliases, factories, read_aliases
from probes.signatures._suffix_fallback import SuffixRule

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


LOOP = """
import importlib, sys
from pathlib import Path
def alias(name, to):
    sys.modules[name] = importlib.import_module(to, __name__)
if True:
    for _f in sorted((Path(__file__).parent / "models").rglob("proc_*.py")):
        _model = _f.parent.name
        _module = _f.stem
        _target = f".models.{_model}.{_module}"
        alias(f"{__name__}.models.{_model}.{_module}_fast", _target)
"""


@pytest.mark.parametrize(
    ("src", "files", "expect"),
    [
        # transformers 5.17's shape: one alias per file the loop's glob finds, in order
        (
            LOOP,
            ["models/a/proc_a.py", "models/b/proc_b.py", "models/b/other.py"],
            {
                "pkg.models.a.proc_a_fast": "pkg.models.a.proc_a",
                "pkg.models.b.proc_b_fast": "pkg.models.b.proc_b",
            },
        ),
        # no file matches: no alias (and no error)
        (LOOP, ["models/a/other.py"], {}),
        # a glob of the folder itself, list(), Path(__file__).resolve()
        (
            LOOP.replace("sorted((Path(__file__).parent", "list((Path(__file__).resolve().parent")
            .replace(".rglob(", ".glob(")
            .replace('/ "models")', '/ "models" / "a")')
            .replace("_f.parent.name", '"a"'),
            ["models/a/proc_x.py"],
            {"pkg.models.a.proc_x_fast": "pkg.models.a.proc_x"},
        ),
        # a value the loop computes otherwise (a call): no alias
        (LOOP.replace("_module = _f.stem", "_module = name_of(_f)"), ["models/a/proc_a.py"], {}),
        # a loop over something that is not the package's files: none
        (
            LOOP.replace('sorted((Path(__file__).parent / "models").rglob("proc_*.py"))', "FILES"),
            ["models/a/proc_a.py"],
            {},
        ),
    ],
)
def test_a_loop_over_the_package_files_makes_one_alias_per_file(
    tmp_path: Path, src: str, files: list[str], expect: dict[str, str]
) -> None:
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    init = tmp_path / "__init__.py"
    got = aliases(ast.parse(textwrap.dedent(src)), "pkg", str(init))
    assert got == expect
    # without the file's place the loop cannot be run: only the literal calls count
    assert aliases(ast.parse(textwrap.dedent(src)), "pkg") == {}


# transformers 5.17.0's __init__.py:853-871: each alias's __getattr__ serves XFast as X, warned
LOOP_GETATTR = (
    LOOP
    + """
        def getattr_factory(target):
            def _getattr(name):
                if name.endswith("Fast"):
                    new_name = name.removesuffix("Fast")
                    logger.warning_once("deprecated")
                    return getattr(importlib.import_module(target, __name__), new_name)
                return getattr(importlib.import_module(target, __name__), name)
            return _getattr
        _alias = f"{__name__}.models.{_model}.{_module}_fast"
        sys.modules[_alias].__getattr__ = getattr_factory(_target)
"""
)


def test_a_loop_gives_each_alias_the_suffix_rules_of_its_getattr(tmp_path: Path) -> None:
    for rel in ("models/a/proc_a.py", "models/b/proc_b.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    tree = ast.parse(textwrap.dedent(LOOP_GETATTR))
    made, rules = read_aliases(tree, "pkg", str(tmp_path / "__init__.py"))
    assert set(made) == {"pkg.models.a.proc_a_fast", "pkg.models.b.proc_b_fast"}
    warns = (
        textwrap.dedent(LOOP_GETATTR)
        .splitlines()
        .index(next(x for x in textwrap.dedent(LOOP_GETATTR).splitlines() if "warning_once" in x))
    )
    assert rules == {alias: [SuffixRule("Fast", 4, warns + 1)] for alias in made}
    # without the __getattr__ assignment: the aliases, no rules
    assert (
        read_aliases(ast.parse(textwrap.dedent(LOOP)), "pkg", str(tmp_path / "__init__.py"))[1]
        == {}
    )
