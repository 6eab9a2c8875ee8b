"""The callers' side: every import, call, attribute read, subclass and method install of a
callee recorded in the caller's files, with the types and values known there, and judged
against the callee's signature; the ``callsites`` probe and ``fixscan`` (its re-check of
edited files for ``check --fix``)."""
