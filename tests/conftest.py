"""Session-wide set-up shared by every test module."""

import signal

import pytest

from tests.support.cli import cli_env, harness_cache  # noqa: F401
from tests.support.faultout import faultdata_out  # noqa: F401
from tests.support.fixpairs import fixpairs_cache, fixpairs_env  # noqa: F401
from tests.support.index import index, index_wheels  # noqa: F401
from tests.support.netns import three_nodes  # noqa: F401
from tests.support.slow import mark_slow
from tests.support.sshd import isolated_home, sshd  # noqa: F401
from tests.support.wheels import fresh_venv, seed_venv, wheels  # noqa: F401

# A runner started with SIGINT ignored (a background job of a non-interactive shell, as CI may
# be) passes the ignore on to every child it execs: harness under test would never see the
# Ctrl-C the tests send. A Python handler is reset to the default across exec, so children
# start with SIGINT at its default, as under a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_slow(items)  # `pytest -m "not slow"`: the fast set (tests/support/slow.py)
