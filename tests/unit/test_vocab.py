"""The vocabulary base: a word's attributes come from its tuple, by the class's annotations."""

from __future__ import annotations

import json

import pytest

from harness.vocab import Word


class Kind(Word):
    rank: int
    breaking: bool
    style: str
    fix: str | None

    FULL = ("full", 2, True, "red", "drop it")
    SHORT = ("short", 1)  # the rest: each type's empty value
    PLAIN = "plain"


@pytest.mark.parametrize(
    ("word", "attrs"),
    [
        (Kind.FULL, (2, True, "red", "drop it")),
        (Kind.SHORT, (1, False, "", None)),
        (Kind.PLAIN, (0, False, "", None)),
    ],
)
def test_attributes_by_annotation_with_empty_defaults(word: Kind, attrs: tuple) -> None:
    assert (word.rank, word.breaking, word.style, word.fix) == attrs


def test_a_word_is_its_string() -> None:
    assert Kind.FULL == "full" and f"{Kind.SHORT}" == "short" and Kind("plain") is Kind.PLAIN
    assert json.dumps({"k": Kind.FULL}) == '{"k": "full"}'


def test_more_attributes_than_annotated_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match=r"Bad\.x: 2 attributes, 1 named"):

        class Bad(Word):
            rank: int

            X = ("x", 1, 2)
