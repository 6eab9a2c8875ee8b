"""The pure decisions behind receiver-type inference (issue 46, item 3), as tables: which names
a caller class body makes its own (probes/callsites/_class_facts.py), which ``__getattr__``
forwards to one wrapped object, and which keywords a new ``**kwargs`` swallowed
(harness/analysis/rules/swallowed.py)."""

from __future__ import annotations

import ast

import pytest

from harness.analysis.rules.swallowed import renamed, swallowed
from harness.models import Parameter
from probes.callsites import _attr_guards as guards
from probes.callsites._class_facts import OPEN, body_names, forwarder, instance_names


def _cls(src: str) -> ast.ClassDef:
    node = ast.parse(src).body[0]
    assert isinstance(node, ast.ClassDef)
    return node


def _params(spec: str) -> tuple[Parameter, ...]:
    out = []
    for n in spec.split():
        kind = (
            "var-keyword"
            if n.startswith("**")
            else "keyword-only"
            if n.startswith("+")
            else "positional-or-keyword"
        )
        name, _, default = n.lstrip("*+").partition("=")
        out.append(Parameter.from_dict({"name": name, "kind": kind, "default": default or None}))
    return tuple(out)


@pytest.mark.parametrize(
    ("src", "target"),
    [
        ("class W:\n def __getattr__(self, name):\n  return getattr(self.model, name)", "model"),
        # peft's shape: the base's __getattr__ first, then the wrapped model
        (
            "class W:\n def __getattr__(self, name):\n  try:\n   return super().__getattr__(name)"
            "\n  except AttributeError:\n   return getattr(self.base_model, name)",
            "base_model",
        ),
        ("class W:\n def run(self):\n  pass", None),  # no __getattr__: nothing forwarded
        # a default stands in for a missing name: nothing raises, so nothing is provably gone
        ("class W:\n def __getattr__(self, name):\n  return getattr(self.m, name, None)", OPEN),
        ("class W:\n def __getattr__(self, name):\n  return self.__dict__.get(name)", OPEN),
        (
            "class W:\n def __getattr__(self, n):\n"
            "  return getattr(self.a, n) or getattr(self.b, n)",
            OPEN,
        ),
        ("class W:\n def __getattribute__(self, name):\n  return 1", OPEN),
        ("class W:\n __getattr__ = staticmethod(lambda n: None)", OPEN),
    ],
)
def test_which_getattr_forwards_to_one_wrapped_object(src: str, target: str | None) -> None:
    assert forwarder(_cls(src)) == target


@pytest.mark.parametrize(
    ("src", "names", "made"),
    [
        ("class C:\n def __init__(self):\n  self.a = 1\n  self.b: int = 2", {"a", "b"}, False),
        ("class C:\n def f(me):\n  me.x += 1\n  setattr(me, 'y', 2)", {"x", "y"}, False),
        ("class C:\n @staticmethod\n def f(other):\n  other.x = 1", set(), False),
        ("class C:\n def f(self, k, v):\n  setattr(self, k, v)", set(), True),
        ("class C:\n def f(self, **kw):\n  self.__dict__.update(kw)", set(), True),
        ("class C:\n def f(self):\n  vars(self)['x'] = 1", set(), True),
        ("class C:\n def f(self, other):\n  other.x = 1", set(), False),  # not on self
    ],
)
def test_names_methods_store_on_self(src: str, names: set[str], made: bool) -> None:
    assert instance_names(_cls(src)) == (names, made)


def test_names_the_class_body_binds() -> None:
    src = (
        "class C(Base):\n"
        "    x = 1\n"
        "    y: int\n"
        "    a, b = 1, 2\n"
        "    __slots__ = ('s', 't')\n"
        "    def m(self): ...\n"
        "    class Inner: ...\n"
        "    @property\n"
        "    def p(self): ...\n"
    )
    assert body_names(_cls(src)) == {"x", "y", "a", "b", "__slots__", "s", "t", "m", "Inner", "p"}


@pytest.mark.parametrize(
    ("keywords", "params", "gone"),
    [
        (("padding",), "text pad_to **kwargs", ("padding",)),
        (("pad_to",), "text pad_to **kwargs", ()),
        (("padding",), "text pad_to", ()),  # no **kwargs: an unexpected keyword, said as such
        (("a", "b", "c"), "a +b **rest", ("c",)),
    ],
)
def test_keywords_a_kwargs_swallows(keywords: tuple[str, ...], params: str, gone: tuple) -> None:
    assert swallowed(keywords, _params(params)) == gone


@pytest.mark.parametrize(
    ("gone", "missing", "old", "pair"),
    [
        (("padding",), ("pad_to",), "text padding", ("padding", "pad_to")),
        (("padding",), ("pad_to",), None, None),  # no baseline: not called a rename
        (("padding",), ("pad_to",), "text padding pad_to", None),  # both were there
        (("extra",), ("pad_to",), "text padding", None),  # the keyword was never a parameter
        (("a", "b"), ("c",), "a b", None),  # not one for one
    ],
)
def test_a_rename_is_one_swallowed_keyword_for_one_missing_parameter(
    gone: tuple[str, ...], missing: tuple[str, ...], old: str | None, pair: tuple | None
) -> None:
    assert renamed(gone, missing, None if old is None else _params(old)) == pair


@pytest.mark.parametrize(
    ("test", "positive", "held"),
    [
        ("hasattr(m, 'a')", True, {("m", "a")}),
        ("hasattr(m, 'a')", False, set()),
        ("not hasattr(self.m, 'a')", False, {("self.m", "a")}),
        ("hasattr(m, 'a') and hasattr(n, 'b')", True, {("m", "a"), ("n", "b")}),
        ("hasattr(m, 'a') or hasattr(n, 'b')", True, set()),  # either may be missing
        ("not hasattr(m, 'a') or not hasattr(n, 'b')", False, {("m", "a"), ("n", "b")}),
        ("hasattr(m, name)", True, set()),  # a computed name guards nothing we can name
    ],
)
def test_what_a_hasattr_test_guards(test: str, positive: bool, held: set) -> None:
    assert guards.pairs(ast.parse(test, mode="eval").body, positive) == held


@pytest.mark.parametrize(
    ("src", "held"),
    [
        ("if not hasattr(m, 'a'):\n    return", {("m", "a")}),
        ("if not hasattr(m, 'a'):\n    log()", set()),  # no exit: the block goes on either way
        ("if hasattr(m, 'a'):\n    return", set()),
    ],
)
def test_what_an_early_exit_leaves_holding(src: str, held: set) -> None:
    st = ast.parse(src).body[0]
    assert guards.after_guard(st) == held


@pytest.mark.parametrize(
    ("handler", "guarded"),
    [("AttributeError", True), ("(KeyError, AttributeError)", True), ("Exception", False),
     ("", False), ("KeyError", False)],
)  # fmt: skip
def test_a_try_guards_its_body_where_a_handler_catches_attribute_error(
    handler: str, guarded: bool
) -> None:
    st = ast.parse(f"try:\n    m.a\nexcept {handler}:\n    pass").body[0]
    assert isinstance(st, ast.Try)
    assert (guards.ANY in guards.body_guard(st, st.body)) is guarded
