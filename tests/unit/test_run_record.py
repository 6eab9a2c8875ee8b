"""Issue 45 item 1: ``run.json`` is typed, and a record an earlier harness wrote still reads.

``tests/fixtures/runs_main/`` holds run directories written by the main of 2026-12-07 (commit
80f01f6) over the tests' sshd: a plain run, a smoke run and the real run after it, a step
spread over two hosts (``wa``/``wb``, shard), a service and the step that needed it -- and
that harness's own ``runs --json`` of host ``a``. They are read back here as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.runs.follow.services import live_service, users_of
from harness.runs.record.lifecycle import state_label
from harness.runs.record.models import RunInfo, RunRecord, RunStatus
from harness.runs.record.parts import (
    Fingerprint,
    GroupRecord,
    NeededService,
    Role,
    ServiceRecord,
    SmokeRecord,
)
from harness.runs.record.written import DiskFull, Progress, Ready
from harness.runs.target.disk import progress_words

MAIN = Path(__file__).resolve().parents[1] / "fixtures" / "runs_main"


def _read(p: Path) -> Any:
    return json.loads(p.read_text()) if p.exists() else None


def _dirs() -> list[Path]:
    return sorted(p for p in MAIN.glob("w?/*") if p.is_dir())


def _info(run_dir: Path) -> RunInfo:
    """A run as the runs probe reports its directory (``run_facts``'s files)."""
    facts = {name: _read(run_dir / f"{name}.json") for name in ("supervisor", "status", "ready")}
    return RunInfo.from_facts({**facts, "record": _read(run_dir / "run.json")}, None)


def _by_step(where: str) -> dict[str, list[RunInfo]]:
    out: dict[str, list[RunInfo]] = {}
    for d in sorted((MAIN / where).iterdir()):
        info = _info(d)
        out.setdefault(info.record.step, []).append(info)
    return out


@pytest.mark.parametrize("run_dir", _dirs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_record_written_by_main_reads_and_writes_back_key_for_key(run_dir: Path) -> None:
    raw = _read(run_dir / "run.json")
    assert RunRecord.from_dict(raw).to_dict() == raw


def test_main_records_read_as_typed_parts() -> None:
    a, b = _by_step("wa"), _by_step("wb")
    smoke, real = a["pick"]
    assert smoke.record.smoke == SmokeRecord(3, 4, Fingerprint())
    assert real.record.smoke is None
    assert real.record.fingerprint is not None and real.record.fingerprint.entry
    # what the review compares: nothing changed since (the same empty stack), the same entry
    now = Fingerprint.of({}, {}, real.record.fingerprint.entry)
    assert now.changes_since(real.record.fingerprint) == []
    assert now.changes_since(smoke.record.smoke.fingerprint) == []  # type: ignore[union-attr]
    ((part_a,), (part_b,)) = a["part"], b["part"]
    group = GroupRecord(part_a.id, "shard", ("a", "b"), 0, Role.STEP)
    assert part_a.record.group == group
    assert part_b.record.group == GroupRecord(part_a.id, "shard", ("a", "b"), 1, Role.STEP)
    ((serve,), (gen,)) = a["serve"], a["generate"]
    svc = serve.record.service
    assert isinstance(svc, ServiceRecord) and svc.url.endswith(f":{svc.port}/health")
    assert svc.ready_timeout == 30.0 and svc.digest and svc.unclaimed_minutes is None
    assert gen.record.services == (NeededService("serve", serve.id, False),)
    assert state_label(serve) == f"service :{svc.port} stopped"
    assert a["plain"][0].record.service is a["plain"][0].record.group is None


def test_the_service_decisions_read_main_records() -> None:
    a = _by_step("wa")
    ((serve,), (gen,)) = a["serve"], a["generate"]
    assert serve.record.service is not None and serve.record.service.digest
    # ended runs: neither reused nor counted as users; alive, both are
    assert live_service([serve], "serve", serve.record.service.digest) is None
    assert users_of([serve, gen], serve.id) == []
    live = [RunInfo(r.record, r.supervisor, True) for r in (serve, gen)]
    assert live_service(live, "serve", serve.record.service.digest) is live[0]
    assert users_of(live, serve.id) == [gen.id]


def test_runs_json_written_by_main_reads_back() -> None:
    """A kept log copy holds the run as ``--json`` wrote it: an older harness's reads."""
    rows = _read(MAIN / "runs-a.json")
    for row in rows:
        info = RunInfo.from_dict(row)
        assert info.to_dict()["record"] == row["record"]
        assert state_label(info) == row["label"]


@pytest.mark.parametrize(
    "part",
    [
        Fingerprint({"vllm": "0.20.2"}, {"speculators": ("0001", "0002")}, "abc"),
        Fingerprint(),
        SmokeRecord(2, None),
        SmokeRecord(3, 4, Fingerprint({"torch": "2.9"}, {})),
        # a served step's: its server's environment, recorded in both fingerprints (smoke9)
        Fingerprint({"torch": "2.9"}, {}, "e1", {"serve": Fingerprint({"vllm": "0.26.0"},
                                                                     {"vllm": ("0001",)})}),
        SmokeRecord(4, 4, Fingerprint({}, {}, None, {"serve": Fingerprint({"vllm": "0.26.0"})})),
        GroupRecord("x-1", "ray", ("h1", "h2")),
        GroupRecord("x-1", "ray", ("h1", "h2"), 1, Role.RAY_NODE, ("x-1-ray0", "x-1-ray1")),
        ServiceRecord(8000, "http://127.0.0.1:8000/health", 1800.0, 2.5, "d1"),
        NeededService("serve", "serve-1", True),
    ],
)  # fmt: skip
def test_each_part_round_trips(part: Any) -> None:
    wire = json.loads(json.dumps(part.to_dict()))
    assert type(part).from_dict(wire) == part
    assert type(part).from_dict(wire).to_dict() == wire


@pytest.mark.parametrize(
    ("raw", "smoke", "group", "service", "services"),
    [
        ({}, None, None, None, None),
        ({"smoke": "x", "group": 3, "service": [], "services": {}}, None, None, None, None),
        ({"smoke": {"layers": "2"}, "group": {"id": "g", "role": "boss", "rank": True},
          "service": {"port": "80"}, "services": [{"step": "s"}, 7]},
         SmokeRecord(0), GroupRecord("g"), ServiceRecord(0, "", 0.0),
         (NeededService("s", ""),)),
    ],
)  # fmt: skip
def test_a_torn_or_foreign_record_reads_as_defaults_never_a_traceback(
    raw: dict[str, Any],
    smoke: SmokeRecord | None,
    group: GroupRecord | None,
    service: ServiceRecord | None,
    services: tuple[NeededService, ...] | None,
) -> None:
    rec = RunRecord.from_dict({"id": "r", **raw})
    assert (rec.smoke, rec.group, rec.service, rec.services) == (smoke, group, service, services)


def test_the_other_files_main_wrote_read_typed() -> None:
    (serve,) = _by_step("wa")["serve"]
    raw = _read(next((MAIN / "wa").glob("serve-*")) / "ready.json")
    assert serve.ready == Ready(raw["url"], raw["ready_at"], raw["seconds"])
    assert serve.ready.to_dict() == raw
    for d in _dirs():
        raw = _read(d / "status.json")
        assert RunStatus.from_dict(raw).to_dict().items() >= raw.items()


def test_progress_as_the_run_program_writes_it(tmp_path: Path) -> None:
    import time

    from probes.runs._fill import progress

    for i in range(3):
        (tmp_path / f"hs_{i}.bin").write_bytes(b"x" * 4096)
    wrote = {**progress(str(tmp_path), time.time() - 60, 10, 4, 2.0), "at": 1.0}
    got = Progress.read(json.loads(json.dumps(wrote)))
    assert got is not None and got.to_dict() == wrote and (got.done, got.total) == (3, 10)
    assert progress_words(got).startswith(" · 3/10 samples · 1,536 tokens/s · ETA 0:00:")
    assert Progress.read({"done": "3"}) is None and Progress.read(None) is None
    assert DiskFull.read({"path": "/w", "space_left": 0}) == DiskFull("/w", 0)


METRICS = """# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m {x}"} 9000.0
vllm:prompt_tokens_total{engine="1",model_name="m"} 1000.0
vllm:num_requests_running{engine="0",model_name="m"} 32.0
vllm:num_requests_waiting{engine="0",model_name="m"} 180.0
vllm:request_success_total{engine="0",finished_reason="length"} 7.0 1700000000000
vllm:request_success_total{engine="0",finished_reason="stop"} 1.0
vllm:prompt_tokens_cached_total{engine="0"} 5.0
"""


@pytest.mark.parametrize(
    ("before", "seconds", "words"),
    [
        (None, 0.0, " · server 32 running, 180 waiting"),
        (
            {"prompt_tokens": 2000.0},
            2.0,
            " · server 4,000 prompt tokens/s, 32 running, 180 waiting",
        ),
        ({"prompt_tokens": 20000.0}, 2.0, " · server 0 prompt tokens/s, 32 running, 180 waiting"),
    ],
)
def test_the_servers_metrics_as_progress_shows_them(
    before: dict[str, float] | None, seconds: float, words: str
) -> None:
    """vLLM's Prometheus text summed over label sets (engines, finish reasons; a label value
    with braces or spaces; a sample timestamp), the rate since the last look, through
    progress.json into the words ``runs`` shows."""
    from probes.runs._metrics import load, parse
    from probes.runs._metrics import words as program_words

    seen = parse(METRICS)
    assert seen == {"prompt_tokens": 10000.0, "running": 32.0, "waiting": 180.0, "finished": 8.0}
    server = load(before, seen, seconds)
    got = Progress.read({"done": 1, "total": 2, "server": json.loads(json.dumps(server))})
    assert got is not None and got.server is not None
    assert got.server.words() == program_words(server) == words
    assert progress_words(got).endswith(words)
    assert Progress.read({"done": 1, "total": 2, "server": {}}).server is None  # type: ignore[union-attr]
