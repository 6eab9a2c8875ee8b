"""``python -m harness.targets.mux serve CONFIG_JSON | stop`` (see :func:`.server.main`)."""

import sys

from harness.targets.mux.server import main

sys.exit(main())
