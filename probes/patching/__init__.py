"""Patch series on a target's installed files: read what is there, apply or revert a series
as one transaction with a durable manifest (the ``patchops`` probe)."""
