"""Issue 33 part 2: ``pytest -m "not slow"`` is the fast set; which tests are slow is derived
(tests/support/slow.py) from what they need, so a new sshd or wheels test is slow by itself."""

from __future__ import annotations

import pytest

from tests.support.slow import why_slow


@pytest.mark.parametrize(
    ("markers", "fixtures", "helpers", "folder", "slow"),
    [
        ((), ("tmp_path",), (), "unit", None),
        (("ssh",), (), (), "unit", "ssh"),
        (("parametrize", "wheels"), (), (), "unit", "wheels"),
        ((), ("tmp_path", "cli_env", "harness_cache", "wheels"), (), "unit", "harness_cache"),
        ((), ("sshd",), (), "unit", "sshd"),
        ((), ("three_nodes",), (), "unit", "three_nodes"),
        ((), ("index", "index_wheels"), (), "unit", "index_wheels"),
        ((), (), ("tests.support.pipvenvs",), "unit", "tests.support.pipvenvs"),
        ((), (), ("tests.support.browser", "pathlib"), "unit", "tests.support.browser"),
        ((), (), ("tests.support.markers",), "unit", None),
        ((), ("tmp_path",), (), "integration", "integration"),
    ],
)
def test_why_a_test_is_slow(
    markers: tuple[str, ...],
    fixtures: tuple[str, ...],
    helpers: tuple[str, ...],
    folder: str,
    slow: str | None,
) -> None:
    assert why_slow(markers, fixtures, helpers, folder) == slow


def test_this_very_test_is_in_the_fast_set(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("slow") is None


@pytest.mark.usefixtures("sshd")
def test_a_test_using_the_sshd_is_marked_slow(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("slow") is not None
