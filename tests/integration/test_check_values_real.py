"""The handwritten caller of ``tests/fixtures/valreal`` against the real loguru and pydantic
wheels from PyPI: loguru's ``logger`` is a module-level ``_Logger(...)`` instance (class in
loguru/_logger.py), pydantic's ``ConfigDict`` a ``TypedDict`` with ``total=False``
(pydantic/config.py:36). Their valid uses are clean; a misspelled method and an unknown key
are still errors (``# E:`` markers in the fixture).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from harness.analysis.checker import Checker
from harness.analysis.scan import Scan
from probes.callsites import callsites
from tests.support import markers
from tests.support.wheels import ensure_wheel

pytestmark = pytest.mark.wheels

CALLER = Path(__file__).resolve().parents[1] / "fixtures" / "valreal"
PINS = {"loguru": "0.7.3", "pydantic": "2.12.5"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("valreal")
    for name, version in PINS.items():
        with zipfile.ZipFile(ensure_wheel(f"{name}=={version}")) as whl:
            whl.extractall(root)
    for entry in CALLER.iterdir():
        shutil.copytree(entry, root / entry.name)
    return root


def test_real_loguru_and_pydantic_uses(site: Path) -> None:
    data = callsites.run(
        {"caller": "realcaller", "callees": None, "paths": [str(site)]}, lambda m: None
    )
    assert sorted(data["callees"]) == ["loguru", "pydantic"]
    findings = Checker(Scan.from_dict(data), PINS).run()
    got = {(f.file, f.line, f.severity, f.category) for f in findings if f.severity != "info"}
    init = CALLER / "realcaller" / "__init__.py"
    assert got == markers.expected(init, "realcaller/__init__.py")
    (typo,) = [f for f in findings if f.category == "missing-attribute"]
    assert typo.symbol == "loguru._logger:Logger.sucess"
