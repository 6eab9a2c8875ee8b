"""Stdlib-only programs that the *target's* Python runs.

They never import the packages they inspect: they find files on the import path and parse them
with ``ast`` under the very grammar that will run them. The controller ships them as source on
stdin (see ``_boot.py``) together with JSON arguments, and reads one JSON envelope back.
"""
