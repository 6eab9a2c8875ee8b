"""The base of every closed vocabulary (change kinds, finding categories, severities, ...).

A vocabulary is a ``str`` enum: its value is the word the JSON and the messages carry, so a
member equals its word (``Severity.ERROR == "error"``) and prints as it (``f"{kind}"``), and
``json.dumps`` writes it as that string. Each member also carries what goes with the word --
its text, whether it breaks, its fix, its rank -- so no table elsewhere repeats the words
(griffe's ``BreakageKind`` is the model). ``to_dict`` methods still write ``.value``: what
crosses the JSON edge is plain data.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """A member of a closed vocabulary; subclasses add the attributes their words carry."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
