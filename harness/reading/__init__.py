"""Use cases that read a target: ``harness probe``, ``check``, ``diff`` (return models)."""
