"""`harness check` reports what a run reaches, with the callee's own source as the evidence
(issue 46's bar: no false error). Handwritten pair ``tests/fixtures/fixpairs/evidapp-0.1.0``
against ``evidlib-1.0.0`` (its pin) and ``-2.0.0``:

* an override is incompatible only where the callee calls it with what it no longer takes:
  ``MyTrainer.step(batch)`` under 2.0.0's ``Trainer.train`` calling ``self.step(1, scale=2.0)``
  (a TypeError); ``DAG.add_node(node)`` under ``Graph.add_node(node_for_adding)``, which
  evidlib never calls by that name (pgmpy's DAG under networkx 3.0), is not;
* ``def __init__(*args, **kwargs)`` takes ``self`` as the first of ``*args`` and every
  positional after it (datasets' ``Features``), a method alike;
* ``from m import *`` takes only ``m.__all__``: ``evidlib.shortest_path`` is ``generic``'s, not
  the private function ``helpers`` imports under that name (``nx.shortest_path`` in networkx 3.0);
* ``gated.py`` follows ``from evidlib import __version__`` (imblearn's ``sklearn_version``): the
  branch for 1.x reads ``evidlib.start_walk``, gone in 2.0.0, and ``walk(**params)`` gets
  ``source`` or ``start`` as the release's test decides -- nothing breaks on either release;
* a parameter annotated with a class whose ``__init__`` only raises (``AutoGraph``, as
  transformers' ``AutoModel``) holds what its factory made, never one of it: its attributes
  are not judged on it.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line


def test_only_the_override_the_callee_calls_badly_is_an_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "evidapp", "evidlib", "2.0.0")
    got = errors_by_line(data)
    assert set(got) == {(14, "override-incompatible")}
    assert (
        "Trainer.train calls it with (1 positional, scale=) at evidlib/trainer.py:3"
        in (got[(14, "override-incompatible")])
    )


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    assert errors_by_line(check_fixpair(fixpairs_env, "evidapp", "evidlib", "1.0.0")) == {}
