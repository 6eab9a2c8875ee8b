"""The pipeline file (pure): ``pipeline.toml`` -> frozen steps (:mod:`.file`, :mod:`.env_keys`,
:mod:`.steps`), one step + parameters -> the argv, cwd and env to launch (:mod:`.resolve`),
what a step requires of its environment (:mod:`.requires`), what makes two services the same
(:mod:`.digest`), ``--smoke``'s plan (:mod:`.smoke`). Imports only :mod:`harness.runs.record`
of ``runs/``."""
