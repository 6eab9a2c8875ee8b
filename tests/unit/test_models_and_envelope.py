"""Models round-trip through JSON exactly; the probe envelope survives a noisy login."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import ProbeError, TargetError
from harness.models import Parameter, ProbeReport, Symbol, TargetFacts, render_parameters
from harness.probe_files import probes_dir
from harness.probe_runner import build_payload, parse_envelope, run_probe
from harness.targets.local import LocalTarget
from probes.signatures import signatures

SITE = str(Path(__file__).resolve().parents[1] / "fixtures" / "site")


class SiteTarget(LocalTarget):
    """This interpreter, reading the handwritten fixture packages (a real subprocess)."""

    def probe_paths(self) -> list[str]:
        return [SITE]


@pytest.mark.parametrize("qualname", [None, "Record", "Base", "calleepkg", "plain"])
def test_probe_report_round_trips(qualname: str | None) -> None:
    module = "calleepkg" if qualname == "calleepkg" else "calleepkg.core"
    data = signatures.run(
        {
            "module": module,
            "qualname": None if qualname == "calleepkg" else qualname,
            "paths": [SITE],
            "source": True,
        },
        lambda m: None,
    )
    report = ProbeReport.from_dict({**data, "target": "t"})
    assert ProbeReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report


def test_target_facts_round_trip() -> None:
    facts = TargetFacts.from_dict(
        {
            "target": "box",
            "python": {"version": "3.12.3"},
            "site_packages": ["/sp"],
            "dists": {"vllm": "0.16.0", "torch": None},
            "gpus": {
                "available": True,
                "reason": None,
                "devices": [
                    {
                        "index": 0,
                        "name": "H200",
                        "memory_total_mib": 143771,
                        "memory_used_mib": 0,
                        "memory_free_mib": 143771,
                        "driver": "580",
                    }
                ],
            },
            "connect_seconds": 0.3,
        }
    )
    assert TargetFacts.from_dict(facts.to_dict()) == facts
    assert facts.gpus[0].memory_free_mib == 143771


@pytest.mark.parametrize(
    ("params", "text"),
    [
        (
            (Parameter("a", "positional-only"), Parameter("b", "positional-or-keyword", "1")),
            "a, /, b=1",
        ),
        (
            (Parameter("a", "positional-or-keyword"), Parameter("k", "keyword-only", None, "int")),
            "a, *, k: int",
        ),
        ((Parameter("args", "var-positional"), Parameter("k", "keyword-only", "2")), "*args, k=2"),
        ((Parameter("kw", "var-keyword", None, "Any"),), "**kw: Any"),
    ],
)
def test_parameters_render_like_python(params: tuple[Parameter, ...], text: str) -> None:
    assert render_parameters(params) == text
    compile(f"def f({text}): pass", "<sig>", "exec")  # what we print is valid Python


def test_symbol_signature_text() -> None:
    sym = Symbol(
        "f",
        "function",
        "m.py",
        1,
        2,
        parameters=(Parameter("x", "positional-or-keyword"),),
        returns="int",
    )
    assert sym.signature == "(x) -> int"


def test_envelope_is_found_among_login_noise() -> None:
    out = subprocess.run(
        [sys.executable, "-B", "-c", (probes_dir() / "_boot.py").read_text()],
        input=build_payload(
            "signatures", {"module": "calleepkg.core", "qualname": "plain", "paths": [SITE]}
        ),
        capture_output=True,
        check=True,
    ).stdout
    noisy = b'Welcome!\n{"ok": false}\n@@HARNESS-ENVELOPE@@ not json\n' + out + b"bye\n"
    env = parse_envelope(noisy)
    assert env is not None and env.ok and env.data["symbols"][0]["qualname"] == "plain"
    assert parse_envelope(b"no envelope at all") is None


def test_probe_failures_become_domain_errors_with_hints() -> None:
    target = SiteTarget()
    with pytest.raises(ProbeError) as info:
        run_probe(target, "signatures", {"module": "calleepkg.cor"})
    assert "calleepkg.core" in (info.value.hint or "")
    with pytest.raises(TargetError) as missing:
        run_probe(LocalTarget("/nonexistent/python3"), "facts", {})
    assert "python interpreter '/nonexistent/python3' not found" in missing.value.message


def test_too_old_python_is_named() -> None:
    """The bootstrap parses on old Pythons and says so instead of crashing."""
    code = (probes_dir() / "_boot.py").read_text().replace("OLDEST = (3, 10)", "OLDEST = (9, 0)")
    out = subprocess.run(
        [sys.executable, "-B", "-c", code], input=b"{}", capture_output=True, check=True
    ).stdout
    env = parse_envelope(out)
    assert env is not None and not env.ok and env.kind == "python-too-old"


def test_a_kept_result_reads_back_as_the_probe_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe's answer is kept as the very line it printed; the next run, sending the kept
    fingerprint, gets the same data back (the files it read unchanged)."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    target = SiteTarget(label="site")
    args = {"refs": [["calleepkg.core", "Record"]]}
    first = run_probe(target, "callsites", args, cache=True)
    assert not first.cached and first.fingerprint
    kept = list((tmp_path / "results").glob("callsites-*.json"))
    assert len(kept) == 1 and kept[0].read_bytes() == first.line
    again = run_probe(target, "callsites", args, cache=True)
    assert again.cached
    assert (again.data, again.warnings, again.fingerprint) == (
        first.data,
        first.warnings,
        first.fingerprint,
    )
