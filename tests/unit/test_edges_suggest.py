"""Issue 21 item 14 (leftover): ``harness probe vllm.config:Sched`` suggested
``vllm.config:cache``. A miss now suggests the names that start with what was typed (any case;
the same case and the shortest first), then difflib's close matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes._finder import ProbeFailure, close_names
from probes.signatures import signatures


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """``vllmish.config``: a package like vLLM's, with submodules ``cache`` and ``scheduler``
    and the config classes imported into it."""
    pkg = tmp_path / "vllmish" / "config"
    pkg.mkdir(parents=True)
    (tmp_path / "vllmish" / "__init__.py").write_text("")
    (pkg / "cache.py").write_text("class CacheConfig:\n    pass\n")
    (pkg / "scheduler.py").write_text(
        "class SchedulerConfig:\n    pass\n\nclass SchedulerPolicy:\n    pass\n"
    )
    (pkg / "__init__.py").write_text(
        "from vllmish.config.cache import CacheConfig\n"
        "from vllmish.config.scheduler import SchedulerConfig, SchedulerPolicy\n"
    )
    return tmp_path


def suggestions(site: Path, module: str, qualname: str | None = None) -> list[str]:
    with pytest.raises(ProbeFailure) as info:
        signatures.run(
            {"module": module, "qualname": qualname, "paths": [str(site)]}, lambda m: None
        )
    return list(info.value.details["suggestions"])


def test_a_prefix_is_suggested_before_close_matches(site: Path) -> None:
    got = suggestions(site, "vllmish.config", "Sched")
    assert got[:3] == [
        "vllmish.config:SchedulerConfig",
        "vllmish.config:SchedulerPolicy",
        "vllmish.config:scheduler",
    ], got
    assert "vllmish.config:cache" in got  # still offered, after them


def test_the_prefix_is_case_insensitive_and_the_same_case_comes_first(site: Path) -> None:
    got = suggestions(site, "vllmish.config", "sched")
    assert got[0] == "vllmish.config:scheduler" and got[1] == "vllmish.config:SchedulerConfig"


def test_a_module_miss_prefers_the_prefix_too(site: Path) -> None:
    got = suggestions(site, "vllmish.config.sched")
    assert got[0] == "vllmish.config.scheduler", got


def test_close_names_keeps_difflibs_matches_after_the_prefixes() -> None:
    pool = ["cache", "CacheConfig", "SchedulerConfig", "scheduler", "Sched"]
    assert close_names("Sched", pool) == ["SchedulerConfig", "scheduler", "cache"]
    assert close_names("Recrd", ["Record", "Child"]) == ["Record"]
    assert close_names("zzz", ["Record"]) == []
