"""The base of every closed vocabulary (change kinds, finding categories, severities, ...).

A vocabulary is a ``str`` enum: its value is the word the JSON and the messages carry, so a
member equals its word (``Severity.ERROR == "error"``) and prints as it (``f"{kind}"``), and
``json.dumps`` writes it as that string. Each member also carries what goes with the word --
its text, whether it breaks, its fix, its rank -- so no table elsewhere repeats the words
(griffe's ``BreakageKind`` is the model). ``to_dict`` methods still write ``.value``: what
crosses the JSON edge is plain data.
"""

from __future__ import annotations

import inspect
from enum import Enum
from typing import Any

#: A word's attribute left out of its tuple: the empty value of the annotated type.
_EMPTY: dict[str, Any] = {"bool": False, "int": 0, "str": ""}


class Word(str, Enum):
    """A member of a closed vocabulary; subclasses add the attributes their words carry.

    The attributes are the subclass's annotations, in order: ``ERROR = ("error", 0, "red")``
    under ``rank: int`` and ``style: str`` sets ``rank`` and ``style``. One left out of the
    tuple gets its type's empty value (``False``, ``0``, ``""``; ``None`` for ``X | None``).
    """

    def __new__(cls, value: str, *attrs: Any) -> Word:
        member = str.__new__(cls, value)
        member._value_ = value
        names = list(inspect.get_annotations(cls).items())
        if len(attrs) > len(names):
            raise TypeError(f"{cls.__name__}.{value}: {len(attrs)} attributes, {len(names)} named")
        for i, (name, kind) in enumerate(names):
            setattr(member, name, attrs[i] if i < len(attrs) else _EMPTY.get(str(kind)))
        return member

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
