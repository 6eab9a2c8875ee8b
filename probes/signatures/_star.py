"""Which names ``from module import *`` takes: Python's rule, for the resolver's star hops.

A star import takes the names of the module's ``__all__`` when it has one, else every name not
starting with ``_``. Following a star hop to a name the module merely imported (networkx's
``centrality/betweenness_subset.py`` imports ``_single_source_shortest_path_basic as
shortest_path`` and lists only its own functions in ``__all__``) puts the wrong function under
the package's name: ``nx.shortest_path`` is ``shortest_paths/generic.py``'s.
"""

from __future__ import annotations

from probes.signatures._syntax import ModuleSummary


def star_hides(mod: ModuleSummary | None, name: str) -> bool:
    """True when ``from mod import *`` certainly does not take ``name``. Only a literal
    ``__all__`` that nothing else in the module touches is taken as the whole list (``__all__
    += other.__all__`` or ``.extend(...)`` leave it open)."""
    if mod is None:
        return False
    mentions = sum(line.count("__all__") for line in mod.lines)
    if mentions == 0:
        return name.startswith("_")
    if mod.all_names is None or name in mod.all_names:
        return False
    return mentions == 1
