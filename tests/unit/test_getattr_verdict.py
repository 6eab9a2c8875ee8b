"""A module ``__getattr__`` evaluated for one name (probes/signatures/_getattr_verdict.py):
served, gone (every way raises) or unknown -- and unknown wherever the source does not pin the
answer down (a loop, a call a ``try`` guards, a table something may change), since only
"gone" turns a warning into an error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from probes._finder import Finder
from probes.signatures._astindex import Index
from probes.signatures._getattr_verdict import GONE, SERVED, UNSURE, getattr_verdict

TABLES = """
    _info = [("int", "use int"), ("float", "use float")]
    FORMER = {n: msg for n, msg in _info}
    EXPIRED = {}
    EXPIRED.update({n: n + " removed" for n in ["fv", "pv"]})
    FUTURE = {"bool", "str"}

    def __getattr__(attr):
        import warnings
        try:
            msg = EXPIRED[attr]
        except KeyError:
            pass
        else:
            warnings.warn(msg)
            return None
        if attr in FUTURE:
            warnings.warn("future")
        if attr in FORMER:
            raise AttributeError(FORMER[attr])
        if attr.startswith("_"):
            raise AttributeError(attr)
        if attr == "testing":
            import m.testing as testing
            return testing
        raise AttributeError(attr)
"""
GLOBALS = """
    import importlib
    submodules = ["sub"]
    def present(): pass
    def __getattr__(name):
        if name in submodules:
            return importlib.import_module(f"m.{name}")
        try:
            return globals()[name]
        except KeyError:
            raise AttributeError(name) from None
"""
FACTORY = """
    from m._mig import migration
    __getattr__ = migration(__name__)
"""
MIG = """
    import sys
    MOVED = {"m:Old": "m:New"}
    def migration(module):
        def wrapper(name):
            path = f"{module}:{name}"
            if path in MOVED:
                return MOVED[path]
            if name in sys.modules[module].__dict__:
                return 1
            raise AttributeError(name)
        return wrapper
"""
LOOP = """
    def __getattr__(name):
        for k in ("a", "b"):
            if name == k:
                return 1
        raise AttributeError(name)
"""
CALL_IN_TRY = """
    def _load(name): ...
    def __getattr__(name):
        try:
            return _load(name)
        except ImportError:
            raise AttributeError(name)
"""
MUTATED = """
    TABLE = {"a": 1}
    def register(k):
        TABLE[k] = 2
    def __getattr__(name):
        if name in TABLE:
            return TABLE[name]
        raise AttributeError(name)
"""
HANDED = """
    TABLE = {"a": 1}
    setup(TABLE)
    def __getattr__(name):
        if name in TABLE:
            return TABLE[name]
        raise AttributeError(name)
"""
UNDECIDED = """
    import os
    if os.environ.get("NEW"):
        TABLE = {"a": 1}
    else:
        TABLE = {"b": 1}
    def __getattr__(name):
        if name in TABLE:
            return TABLE[name]
        raise AttributeError(name)
"""
STAR = """
    from m.other import *
    def __getattr__(name):
        try:
            return globals()[name]
        except KeyError:
            raise AttributeError(name)
"""
REPLACED = """
    import sys
    def __getattr__(name):
        raise AttributeError(name)
    sys.modules[__name__] = object()
"""
SETUP_FLAG = """
    try:
        __SETUP__
    except NameError:
        __SETUP__ = False
    if __SETUP__:
        pass
    else:
        GONE = ["int"]
        def __getattr__(attr):
            if attr in GONE:
                raise AttributeError(attr)
            return 1
"""


def index(tmp_path: Path, source: str) -> Index:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "__init__.py").write_text(textwrap.dedent(source))
    (tmp_path / "m" / "_mig.py").write_text(textwrap.dedent(MIG))
    (tmp_path / "m" / "other.py").write_text("x = 1\n")
    return Index(Finder([str(tmp_path)]))


@pytest.mark.parametrize(
    ("source", "name", "word"),
    [
        (TABLES, "int", GONE),  # `if attr in FORMER: raise`, a comprehension over a literal
        (TABLES, "bool", GONE),  # warned about, then falls to the last raise
        (TABLES, "fv", SERVED),  # `try: EXPIRED[attr]` holds it: the else returns
        (TABLES, "testing", SERVED),
        (TABLES, "_private", GONE),  # startswith
        (GLOBALS, "sub", SERVED),
        (GLOBALS, "present", SERVED),  # globals()[name] holds it
        (GLOBALS, "interp", GONE),  # KeyError -> raise
        (FACTORY, "Old", SERVED),  # the factory's closure: module is "m"
        (FACTORY, "Gone", GONE),
        (LOOP, "c", UNSURE),
        (CALL_IN_TRY, "c", UNSURE),  # _load may raise ImportError: the handler runs
        (MUTATED, "b", UNSURE),  # a function may add it
        (HANDED, "b", UNSURE),  # a call was handed the table
        (UNDECIDED, "a", UNSURE),  # two tables, one of them holds it
        (UNDECIDED, "c", UNSURE),
        (STAR, "y", UNSURE),  # a star import may have put it in globals()
        (REPLACED, "y", UNSURE),  # the module object is another one
        (SETUP_FLAG, "int", GONE),  # __SETUP__ is False: the else branch defines it
        (SETUP_FLAG, "float", SERVED),
    ],
)
def test_verdict(tmp_path: Path, source: str, name: str, word: str) -> None:
    idx = index(tmp_path, source)
    mod = idx.module("m")
    assert mod is not None
    assert getattr_verdict(idx, mod, name).word == word


def test_gone_by_name_only_on_a_branch_chosen_for_it(tmp_path: Path) -> None:
    """``named``: the raise sits on a branch a test picked for this name (numpy's
    ``__former_attrs__``), not the fall-through every unknown name reaches."""
    idx = index(tmp_path, TABLES)
    mod = idx.module("m")
    assert mod is not None
    assert getattr_verdict(idx, mod, "int").named
    assert not getattr_verdict(idx, mod, "bool").named
