"""``python -m harness.targets.mux serve CONFIG_JSON | stop`` (see :func:`.process.main`)."""

import sys

from harness.targets.mux.process import main

sys.exit(main())
