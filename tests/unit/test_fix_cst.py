"""The LibCST edits as tables: source in, source out -- byte for byte, comments and layout kept.

Each expected text is the input with only the edited names changed (or the one argument /
alias removed), so a test passes only if everything else is untouched.
"""

from __future__ import annotations

import pytest

from harness.fixing.cst import apply_edits
from harness.fixing.model import Edit, ImportEdit, KeywordEdit

MOVE = [
    (
        "every name goes to one module: only the module path changes",
        "import os\nfrom lib.util import (  # helpers\n    a,\n    b as bee,\n)\n",
        [
            ImportEdit(2, "lib.util", "a", "lib.new", "a"),
            ImportEdit(2, "lib.util", "b", "lib.new", "b"),
        ],
        "import os\nfrom lib.new import (  # helpers\n    a,\n    b as bee,\n)\n",
    ),
    (
        "some stay: the movers get their own line after the statement, the rest is kept",
        "from lib.util import (\n    keep,  # still here\n    a,\n    b,\n)\nx = 1\n",
        [
            ImportEdit(1, "lib.util", "a", "lib.x", "a"),
            ImportEdit(1, "lib.util", "b", "lib.y", "b"),
        ],
        "from lib.util import (\n    keep,  # still here\n)\n"
        "from lib.x import a\nfrom lib.y import b\nx = 1\n",
    ),
    (
        "a middle name leaves an unparenthesised import",
        "from lib.util import a, b, c  # tail\n",
        [ImportEdit(1, "lib.util", "b", "lib.x", "b")],
        "from lib.util import a, c  # tail\nfrom lib.x import b\n",
    ),
    (
        "inside a function body the new line is indented as the block is",
        "def f():\n    from lib.util import a, b\n    return a, b\n",
        [ImportEdit(2, "lib.util", "b", "lib.x", "b")],
        "def f():\n    from lib.util import a\n    from lib.x import b\n    return a, b\n",
    ),
]

RENAME = [
    (
        "the uses follow: names and a string annotation; a local of that name does not",
        'from lib import Old\n\n\ndef f(x: "Old") -> Old:\n    Old2 = Old(1)\n'
        "    return Old.k\n\n\ndef g():\n    Old = 3\n    return Old\n",
        [ImportEdit(1, "lib", "Old", "lib", "New")],
        'from lib import New\n\n\ndef f(x: "New") -> New:\n    Old2 = New(1)\n'
        "    return New.k\n\n\ndef g():\n    Old = 3\n    return Old\n",
    ),
    (
        "an aliased import changes only the imported name",
        "from lib import Old as O\nO()\n",
        [ImportEdit(1, "lib", "Old", "lib", "New")],
        "from lib import New as O\nO()\n",
    ),
    (
        "a name the file exports keeps its name: imported as the old one",
        'from lib import Old\n__all__ = ["Old"]\nOld()\n',
        [ImportEdit(1, "lib", "Old", "lib", "New")],
        'from lib import New as Old\n__all__ = ["Old"]\nOld()\n',
    ),
    (
        "a new name already used in the file: imported as the old one, nothing collides",
        "from lib import Old\nNew = 1\nOld(New)\n",
        [ImportEdit(1, "lib", "Old", "lib", "New")],
        "from lib import New as Old\nNew = 1\nOld(New)\n",
    ),
    (
        "bound twice (a fallback): imported as the old one",
        "try:\n    from lib import Old\nexcept ImportError:\n    Old = None\nOld()\n",
        [ImportEdit(2, "lib", "Old", "lib", "New")],
        "try:\n    from lib import New as Old\nexcept ImportError:\n    Old = None\nOld()\n",
    ),
    (
        "renamed and moved: its own line",
        "from lib.a import Old, other\nOld()\n",
        [ImportEdit(1, "lib.a", "Old", "lib.b", "New")],
        "from lib.a import other\nfrom lib.b import New\nNew()\n",
    ),
]

KEYWORDS = [
    (
        "rename in place, the comment stays",
        "x = f(\n    1,\n    old=2,  # why\n    z=3,\n)\n",
        [KeywordEdit(1, "old", "new")],
        "x = f(\n    1,\n    new=2,  # why\n    z=3,\n)\n",
    ),
    (
        "drop one of several lines",
        "cfg = make(\n    a=1,\n    gone=s,\n    b=2,\n)\n",
        [KeywordEdit(1, "gone", None)],
        "cfg = make(\n    a=1,\n    b=2,\n)\n",
    ),
    (
        "drop the last one: the trailing comma and the closing line stay as they were",
        "cfg = make(\n    a=1,\n    gone=s,\n)\n",
        [KeywordEdit(1, "gone", None)],
        "cfg = make(\n    a=1,\n)\n",
    ),
    (
        "drop a middle one at a line end: the line break is kept",
        "y = f(1, gone=2,\n      j=3)\n",
        [KeywordEdit(1, "gone", None)],
        "y = f(1,\n      j=3)\n",
    ),
    (
        "drop the only one",
        "f(gone=None)\n",
        [KeywordEdit(1, "gone", None, only_if="None")],
        "f()\n",
    ),
    (
        "a method call on an attribute chain, by the line the call starts on",
        "self.x.send(\n    b'',\n    flush=True)\n",
        [KeywordEdit(1, "flush", "flush_now")],
        "self.x.send(\n    b'',\n    flush_now=True)\n",
    ),
]


DICT_KEYS = [
    (
        "a key of a dict spread with **: dropped where the dict gets it",
        'opts = {"name": "n", "verbose": True}\nget(**opts)\n',
        [KeywordEdit(1, "verbose", None, in_dict=True)],
        'opts = {"name": "n"}\nget(**opts)\n',
    ),
    (
        "renamed in a literal, in dict(...) and in d[...] = v",
        'a = {"verbose": 1}\nb = dict(verbose=2)\nc["verbose"] = 3\n',
        [
            KeywordEdit(1, "verbose", "log", in_dict=True),
            KeywordEdit(2, "verbose", "log", in_dict=True),
            KeywordEdit(3, "verbose", "log", in_dict=True),
        ],
        'a = {"log": 1}\nb = dict(log=2)\nc["log"] = 3\n',
    ),
    (
        "the old default, on its own line",
        'x = {\n    "a": 1,\n    "gone": None,\n}\n',
        [KeywordEdit(3, "gone", None, only_if="None", in_dict=True)],
        'x = {\n    "a": 1,\n}\n',
    ),
]


def test_a_dict_key_drop_that_is_not_certain_is_refused() -> None:
    for before, edit in [
        ('c["gone"] = 3\n', KeywordEdit(1, "gone", None, in_dict=True)),
        ('x = {"gone": 2}\n', KeywordEdit(1, "gone", None, only_if="None", in_dict=True)),
    ]:
        got = apply_edits(before, [edit])
        assert got.text == before and len(got.refused) == 1


@pytest.mark.parametrize(("why", "before", "edits", "after"), MOVE + RENAME + KEYWORDS + DICT_KEYS)
def test_edits_change_only_what_they_name(
    why: str, before: str, edits: list[Edit], after: str
) -> None:
    got = apply_edits(before, edits)
    assert got.refused == (), why
    assert got.text == after, why


@pytest.mark.parametrize(
    ("before", "edit", "reason"),
    [
        (
            "from lib import a\n",
            ImportEdit(2, "lib", "a", "x", "a"),
            "no `from lib import a` starts at line 2",
        ),
        ("from other import a\n", ImportEdit(1, "lib", "a", "x", "a"), "no `from lib import a`"),
        ("f(a=1)\n", KeywordEdit(1, "b", "c"), "no call starting at line 1 passes 'b'"),
        ("f(a=1, b=g(a=2))\n", KeywordEdit(1, "a", "z"), "2 calls starting at line 1 pass 'a'"),
        ("f(a=1, z=2)\n", KeywordEdit(1, "a", "z"), "passes 'z' already"),
        (
            "f(a=x.y)\n",
            KeywordEdit(1, "a", None, only_if="None"),
            "passes a=x.y, not the old default None",
        ),
        ("f(\n", KeywordEdit(1, "a", None), "LibCST cannot parse the file"),
    ],
)
def test_an_edit_that_is_not_exactly_there_is_refused(before: str, edit: Edit, reason: str) -> None:
    got = apply_edits(before, [edit])
    assert [r.edit for r in got.refused] == [edit]
    assert reason in got.refused[0].reason
    assert got.text == before


def test_the_old_default_is_compared_as_code_not_as_text() -> None:
    got = apply_edits("f(mode='fast')\n", [KeywordEdit(1, "mode", None, only_if='"fast"')])
    assert (got.text, got.refused) == ("f()\n", ())


def test_one_refusal_leaves_the_other_edits() -> None:
    got = apply_edits(
        "from lib import a\nf(k=1)\n",
        [ImportEdit(1, "lib", "a", "lib2", "a"), KeywordEdit(2, "nope", None)],
    )
    assert got.text == "from lib2 import a\nf(k=1)\n"
    assert len(got.refused) == 1


def test_a_byte_order_mark_stays() -> None:
    """imbalanced-learn's pipeline.py starts with one; LibCST's round trip drops it, which
    would make the patch rewrite line 1 as well as the import."""
    got = apply_edits(
        '\ufeff"""Doc."""\nfrom lib import a\n', [ImportEdit(2, "lib", "a", "lib2", "a")]
    )
    assert got.text == '\ufeff"""Doc."""\nfrom lib2 import a\n'
