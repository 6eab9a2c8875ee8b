"""`harness check` through a parameter annotated as a union with one tuple member, narrowed to
it by a type test (issue 46, round 2's sweetviz x pandas 2.0.3): ``source: Union[DataFrame,
Tuple[DataFrame, str]]`` under ``elif type(source) == list or type(source) == tuple:`` makes
``source[0]`` a DataFrame, so ``source_df = source[0]; source_df.iteritems()`` in that branch
is checked.

The pair is handwritten (``tests/fixtures/fixpairs/frameapp-0.1.0/frameapp/seq.py`` against
``framelib-2.0.0``, which removed ``Frame.iteritems``).
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line


def test_an_element_of_a_narrowed_tuple_is_checked(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "frameapp", "framelib", "2.0.0")
    seq = [f for f in data["findings"] if f["file"] == "frameapp/seq.py"]
    errors = {(f["line"], f["category"]) for f in seq if f["severity"] == "error"}
    assert errors == {(10, "missing-attribute"), (19, "missing-attribute")}
    # not narrowed (a column it may be), a rebound parameter, two sequence members, a name a
    # branch rebound, read in another branch (:46 narrowed, :53 not): nothing
    assert not {f["line"] for f in seq} & {25, 31, 38, 46, 53}


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "frameapp", "framelib", "1.0.0")
    assert not errors_by_line(data)
