"""Issue 46 class (a) through the shapes imbalanced-learn 0.12.3 takes on scikit-learn 1.7
(round 2: 8 of its 9 ``self._validate_data`` & co missed), on a handwritten pair with no
baseline (``selfapp`` requires ``selflib>=1.0``, a range, as imbalanced-learn does).

selflib 2.0.0 dropped ``BaseEstimator._validate_data``, ``_check_n_features`` and
``_check_feature_names`` (scikit-learn 1.6 made them functions of ``utils/validation``). The
caller reaches them on ``self`` through its own mixins, in classes that derive from *two*
callee classes (``BaseSampler(SamplerMixin, OneToOneFeatureMixin)``), one of them imported in a
``try:`` whose ``except ImportError:`` imports an old alias; the base's ``set_params`` sets
names only after ``if key not in valid: raise``, and its ``__setstate__`` restores a pickled
``__dict__``: neither makes a new name, so the base is still read as closed. The name is gone
only because *both* callee bases lack it (``get_feature_names_out`` is on the mixin: nothing).
``self.n_features_in_`` and ``est.n_features_in_`` are never errors: selflib 2.0.0 stores it on
the estimators it is handed (``estimator.n_features_in_ = ...``), whatever the class binds.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line

FILE = "selfapp/base.py"


def test_self_members_gone_from_every_callee_base(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "selfapp", "selflib", "2.0.0")
    assert not data.get("baseline")
    errors = errors_by_line(data)
    assert set(errors) == {
        (21, "missing-attribute"),
        (30, "missing-attribute"),
        (31, "missing-attribute"),
        (38, "missing-attribute"),
    }
    assert all(f["file"] == FILE for f in data["findings"] if f["severity"] == "error")
    assert errors[(21, "missing-attribute")].startswith(
        "'BaseEstimator' object has no attribute '_validate_data' (selflib 2.0.0): BaseSampler "
        "reads it through its base BaseEstimator (selflib/base.py:1)"
    )
    assert "'_check_n_features'" in errors[(30, "missing-attribute")]
    assert "'_check_feature_names'" in errors[(31, "missing-attribute")]
    assert "Metric reads it" in errors[(38, "missing-attribute")]
    said = " ".join(f["message"] for f in data["findings"])
    assert "n_features_in_" not in said and "get_feature_names_out" not in said


def test_the_release_it_was_written_for_says_nothing(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "selfapp", "selflib", "1.0.0")
    assert [f for f in data["findings"] if f["severity"] == "error"] == []
