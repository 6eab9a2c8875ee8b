"""A ``__getattr__`` that serves an old name by cutting a suffix off it: the rules read from
its source, by table (transformers 5.17.0's ``_fast`` aliases and ``_LazyModule``)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from probes.signatures._suffix_fallback import SuffixRule, suffix_rules


def rules(src: str) -> list[SuffixRule]:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return suffix_rules(fn)


@pytest.mark.parametrize(
    ("src", "expect"),
    [
        # transformers/__init__.py:853-869: removesuffix, a warning on line 4
        (
            """
            def _getattr(name):
                if name.endswith("Fast"):
                    new_name = name.removesuffix("Fast")
                    logger.warning_once("deprecated", name)
                    return getattr(target, new_name)
                return getattr(target, name)
            """,
            [SuffixRule("Fast", 4, 5)],
        ),
        # utils/import_utils.py:2662-2680 (_LazyModule.__getattr__, a method): a slice; one
        # rule warns, the other is silent
        (
            """
            def __getattr__(self, name):
                if name in self._objects:
                    return self._objects[name]
                if name.endswith("TokenizerFast"):
                    fallback_name = name[:-4]
                    return fallback_name
                if name.endswith("ImageProcessorFast") and name in self._x:
                    fallback_name = name[:-4]
                    logger.warning_once("gone")
                    return fallback_name
            """,
            [SuffixRule("TokenizerFast", 4, 0), SuffixRule("ImageProcessorFast", 4, 10)],
        ),
        # an endswith test on another variable, or a body that binds no cut name: no rule
        (
            """
            def __getattr__(name):
                other = name
                if other.endswith("Fast"):
                    return other[:-4]
                if name.endswith("Old"):
                    raise AttributeError(name)
            """,
            [],
        ),
    ],
)
def test_the_rules_a_getattr_source_has(src: str, expect: list[SuffixRule]) -> None:
    assert rules(src) == expect


@pytest.mark.parametrize(
    ("rule", "name", "expect"),
    [
        (SuffixRule("Fast", 4, 0), "ViTImageProcessorFast", "ViTImageProcessor"),
        (SuffixRule("ImageProcessorFast", 4, 1), "ViTImageProcessorFast", "ViTImageProcessor"),
        (SuffixRule("Fast", 4, 0), "ViTImageProcessor", None),  # the suffix is not there
        (SuffixRule("Fast", 4, 0), "Fast", None),  # nothing would be left
    ],
)
def test_a_rule_applies_to_names_with_its_suffix(
    rule: SuffixRule, name: str, expect: str | None
) -> None:
    assert rule.apply(name) == expect
