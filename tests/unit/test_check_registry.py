"""The rule registry: one emitting rule per category, the order its ``after`` asks for, and
rules that see only what the rules they name produced. Decisions by tables; the fixtures of
``test_check_rules`` and ``test_check_drift`` show what the rules really emit."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.carried import DeletedFile, SeriesFacts
from harness.analysis.checker import RULES, merged, ordered, run_rules
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Context, Earlier, FailedImports, Produced, Rule
from harness.analysis.rules.calls import CALL_CATEGORIES
from harness.analysis.scan import CallerInfo, Scan, fits_from, lookups_from
from harness.analysis.serve import ServeFacts, ServeVocab, find_serve, probe_args
from harness.analysis.uses import Site
from harness.reading.baseline import baseline_args
from probes.callsites import callsites
from probes.signatures import serveargs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def emitters() -> dict[Category, list[str]]:
    out: dict[Category, list[str]] = {c: [] for c in Category}
    for rule in RULES:
        for c in rule.emits:
            out[c].append(rule.name)
    return out


def test_every_category_has_exactly_one_emitting_rule() -> None:
    assert {c: names for c, names in emitters().items() if len(names) != 1} == {}


def _site_context() -> Context:
    site = FIXTURES / "site"
    raw = callsites.run({"caller": "callerpkg", "callees": None, "paths": [str(site)]}, print)
    return Context(Scan.from_dict(raw), {"calleepkg": "1.2.3", "hyphen_pkg": "2.0"})


def _drift_context() -> Context:
    drift = FIXTURES / "drift"
    paths = [str(drift / "caller"), str(drift / "v2")]
    scan = Scan.from_dict(
        callsites.run({"caller": "drifter", "callees": None, "paths": paths}, print)
    )
    base = callsites.run({**baseline_args(scan), "paths": [str(drift / "v1")]}, print)
    return Context(
        scan, {"driftee": "2.0"}, lookups_from(base["symbols"]), fits_from(base.get("fits"))
    )


def _serve_context() -> Context:
    """A step's ``vllm serve`` command against the vLLM-shaped fixture (``check --step``)."""
    vocab = ServeVocab.from_dict(
        serveargs.run({**probe_args(), "paths": [str(FIXTURES / "serve")]}, print)
    )
    argv = ["vllm", "serve", "m", "--tensor-parallel-sise", "2", "--speculative-config",
            '{"method": "extract_hidden_states", "num_speculative_token": 1}']  # fmt: skip
    call = find_serve(argv, lambda i, _text: Site("pipeline.toml", i + 1))
    assert call is not None
    return Context(Scan(CallerInfo("step serve", None), {}), {}, serve=ServeFacts(call, vocab))


def _inherit_context(tmp: Path) -> Context:
    """The inheritapp pair (tests/fixtures/fixpairs): a base that gained and lost methods,
    a variable the callee refuses."""
    import zipfile

    from tests.support.fixpairs import FIXPAIRS, build_wheel

    roots = {}
    for name in ("inheritapp-0.1.0", "inheritlib-1.0.0", "inheritlib-2.0.0"):
        with zipfile.ZipFile(build_wheel(FIXPAIRS / name, tmp)) as zf:
            zf.extractall(tmp / name)
        roots[name] = str(tmp / name)
    paths = [roots["inheritapp-0.1.0"], roots["inheritlib-2.0.0"]]
    scan = Scan.from_dict(
        callsites.run({"caller": "inheritapp", "callees": None, "paths": paths}, print)
    )
    base = callsites.run({**baseline_args(scan), "paths": [roots["inheritlib-1.0.0"]]}, print)
    gone = DeletedFile("inheritlib", "2.0.0", "patches/inheritlib/1.0.0", "0001-runner",
                       "patches/inheritlib/1.0.0/0001-runner.patch", 3,
                       "inheritlib/legacy_runner.py")  # fmt: skip
    return Context(
        scan, {"inheritlib": "2.0.0"}, lookups_from(base["symbols"]), series=SeriesFacts((gone,))
    )


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Produced]]:
    """Each rule's output on each of the fixtures."""
    inherit = _inherit_context(tmp_path_factory.mktemp("inherit"))
    return [
        run_rules(_site_context()),
        run_rules(_drift_context()),
        run_rules(_serve_context()),
        run_rules(inherit),
    ]


@pytest.fixture(scope="module")
def emitted(produced: list[dict[str, Produced]]) -> dict[str, set[Category]]:
    """Rule name -> the categories it emitted on the two fixtures."""
    out: dict[str, set[Category]] = {r.name: set() for r in RULES}
    for run in produced:
        for name, got in run.items():
            out[name] |= {f.category for f in got.findings}
    return out


def test_each_rule_emits_only_what_it_declares(emitted: dict[str, set[Category]]) -> None:
    declared = {r.name: set(r.emits) for r in RULES}
    assert {n: cs - declared[n] for n, cs in emitted.items() if cs - declared[n]} == {}


def test_the_fixtures_make_every_category(emitted: dict[str, set[Category]]) -> None:
    assert set(Category) - set().union(*emitted.values()) == set()


def test_the_subject_is_what_the_message_says(produced: list[dict[str, Produced]]) -> None:
    """The typed subject a reader acts on names what the prose names, on every finding."""
    wrong = []
    for run in produced:
        for got in run.values():
            for f in got.findings:
                named = [*f.keywords, f.imported or "", f.attribute or ""]
                if f.category in CALL_CATEGORIES - {Category.TOO_MANY_POSITIONAL}:
                    ok = bool(f.keywords) and all(f"'{k}'" in f.message for k in f.keywords)
                elif f.category == Category.IMPORT_MISSING:
                    ok = (f.imported is None) == f.message.startswith("no module named")
                elif f.category == Category.MISSING_ATTRIBUTE:
                    ok = f.attribute is not None and f.attribute in f.message
                else:
                    ok = all(n in f.message for n in named)
                if not ok:
                    wrong.append((f.line, f.category, named, f.message))
    assert wrong == []


def _rule(name: str, *after: str) -> Rule:
    return Rule(name, frozenset(), lambda ctx, earlier: Produced(), after)


@pytest.mark.parametrize(
    ("rules", "error"),
    [
        ((_rule("a"), _rule("b", "a")), None),
        ((_rule("a"), _rule("b"), _rule("c", "a", "b")), None),
        ((_rule("b", "a"), _rule("a")), "rule b runs after a, listed later"),
        ((_rule("a", "nowhere"),), "rule a runs after nowhere, listed later"),
    ],
)
def test_a_rule_runs_after_the_rules_it_names(rules: tuple[Rule, ...], error: str | None) -> None:
    if error is None:
        assert ordered(rules) == rules
    else:
        with pytest.raises(ValueError, match=error):
            ordered(rules)


def test_the_registry_is_in_an_order_its_rules_accept() -> None:
    assert ordered(RULES) == RULES


def _finding(
    line: int,
    category: Category = Category.UNEXPECTED_KWARG,
    severity: Severity = Severity.ERROR,
    message: str = "m",
) -> Finding:
    return Finding(severity, category, "a.py", line, "", "m:f", message, "")


def test_a_rule_sees_only_what_the_rules_it_names_produced() -> None:
    failed = FailedImports(frozenset({("a.py", "m:gone")}))
    seen: dict[str, Earlier] = {}

    def spy(name: str, *after: str) -> Rule:
        def check(ctx: Context, earlier: Earlier) -> Produced:
            seen[name] = earlier
            return Produced()

        return Rule(name, frozenset(), check, after)

    maker = Rule("maker", frozenset(), lambda c, e: Produced((_finding(1),), failed))
    run_rules(Context(Scan.from_dict({}), {}), (maker, spy("reader", "maker"), spy("other")))
    assert seen["reader"] == Earlier((_finding(1),), failed)
    assert seen["other"] == Earlier()


@pytest.mark.parametrize(
    ("file", "key", "covered"),
    [
        ("a.py", "m:gone", True),
        ("a.py", "m:gone.attr", True),  # a member of the failed name
        ("a.py", "m:gone_too", False),  # another name with the same start
        ("b.py", "m:gone", False),  # the import failed in another file
    ],
)
def test_failed_imports_cover_the_name_and_its_members(file: str, key: str, covered: bool) -> None:
    assert FailedImports(frozenset({("a.py", "m:gone")})).covers(file, key) is covered


def test_merged_says_a_use_once_and_sorts_by_line_then_severity() -> None:
    warn = _finding(2, Category.DRIFT, severity=Severity.WARNING)
    other_drift = _finding(2, Category.DRIFT, severity=Severity.WARNING, message="other")
    first, twice = _finding(2), _finding(2, message="said again")
    early = _finding(1, Category.MISSING_ATTRIBUTE)
    got = merged([warn, other_drift, first, twice, early])
    assert got == [early, first, warn, other_drift]
