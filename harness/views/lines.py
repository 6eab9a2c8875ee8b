"""What a view hands back: the lines it would print, each with its print options.

Views return renderables; only the CLI prints (docs/ARCHITECTURE.md). A view that needs
per-line options (``soft_wrap=True``, ``width=``) records each line as ``add(...)`` would
call ``Console.print``; :func:`harness.cli.common.show` prints them in order, unchanged.
"""

from __future__ import annotations

from typing import Any


class Lines(list[tuple[tuple[Any, ...], dict[str, Any]]]):
    """Print records, in order: the arguments of one ``Console.print`` call each.

    ``piped_width``: when not printed on a terminal, print on a console at least this wide
    (a pipe gets whole run ids, not ``count-2025…``).
    """

    piped_width: int = 0

    def add(self, *objects: Any, **options: Any) -> None:
        self.append((objects, options))
