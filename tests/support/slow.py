"""The ``slow`` marker, derived: a test is slow when it needs something that takes seconds to
minutes to set up or run -- a real sshd, the real PyPI wheels (downloaded on a fresh machine),
a network namespace of hosts, a browser, CPU vLLM, or real ``harness`` processes launching
real runs. ``pytest -m "not slow"`` is the fast set a developer runs while working (the pure,
table-driven tests and the probes run in-process); ``bash .ci/run`` runs everything.

A test is marked ``slow`` here (by :func:`mark_slow`, from conftest's collection hook) when it
lives in ``tests/integration/`` (real processes, each test seconds: measured, the integration
tests outside the classes below still took 5 of the fast set's 7 minutes), carries one of
:data:`SLOW_MARKERS`, uses (directly or through other fixtures) one of :data:`SLOW_FIXTURES`,
or its module uses one of :data:`SLOW_HELPERS`; a test slow for another reason says
``@pytest.mark.slow`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

#: Markers that imply ``slow`` (registered in pyproject.toml).
SLOW_MARKERS = ("ssh", "wheels")
#: Fixtures whose set-up is slow: a real sshd (or hosts in network namespaces, each with
#: one), PyPI wheels and the venvs and caches built from them, a local index of real wheels.
SLOW_FIXTURES = frozenset(
    {
        "sshd",
        "three_nodes",
        "wheels",
        "seed_venv",
        "fresh_venv",
        "harness_cache",
        "fixpairs_cache",
        "index_wheels",
    }
)


#: Helpers whose use makes a whole test module slow: venvs built with pip (torch, CPU vLLM,
#: transformers; minutes on a fresh machine) and headless Chromium.
SLOW_HELPERS = ("tests.support.pipvenvs", "tests.support.browser")


#: The folder of tests that drive real processes end to end.
INTEGRATION = "integration"


def why_slow(
    markers: Iterable[str],
    fixtures: Iterable[str],
    helpers: Iterable[str] = (),
    folder: str = "",
) -> str | None:
    """The folder, marker, fixture or helper module that makes a test slow; ``None`` for a
    fast one."""
    if folder == INTEGRATION:
        return folder
    names = set(markers)
    for marker in SLOW_MARKERS:
        if marker in names:
            return marker
    for name in sorted(set(fixtures) & SLOW_FIXTURES):
        return name
    for helper in sorted(set(helpers) & set(SLOW_HELPERS)):
        return helper
    return None


def _helpers(item: pytest.Item) -> set[str]:
    """The ``tests.support`` modules the test's module imported names from."""
    module = getattr(item, "module", None)
    found = {getattr(v, "__module__", None) for v in vars(module).values()} if module else set()
    return {m for m in found if isinstance(m, str)}


def mark_slow(items: Iterable[pytest.Item]) -> None:
    for item in items:
        markers = [m.name for m in item.iter_markers()]
        if "slow" in markers:
            continue
        fixtures = getattr(item, "fixturenames", ())
        folder = item.path.parent.name
        if why_slow(markers, fixtures, _helpers(item), folder) is not None:
            item.add_marker(pytest.mark.slow)
