from tests.support.cli import cli_env, harness_cache  # noqa: F401
from tests.support.fixpairs import fixpairs_cache  # noqa: F401
from tests.support.index import index, index_wheels  # noqa: F401
from tests.support.netns import three_nodes  # noqa: F401
from tests.support.sshd import isolated_home, sshd  # noqa: F401
from tests.support.wheels import fresh_venv, seed_venv, wheels  # noqa: F401
