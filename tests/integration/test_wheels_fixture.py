"""The real-package fixtures deliver what the integration tests rely on.

Every other integration test builds on these wheels and venvs, so a broken cache (a truncated
download, a venv whose python points elsewhere) should fail here, loudly and first.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from tests.support.wheels import (
    REQUIREMENTS,
    SEED_REQUIREMENTS,
    SeedVenv,
    Wheels,
    _record_hash,
    make_venv,
)

pytestmark = pytest.mark.wheels


def _interpreter_paths(python: Path) -> dict[str, str]:
    """Ask a venv's own interpreter where it lives (without importing anything heavy)."""
    code = (
        "import json, sys, sysconfig; "
        "print(json.dumps({'prefix': sys.prefix, 'purelib': sysconfig.get_path('purelib')}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    paths: dict[str, str] = json.loads(out.stdout)
    return paths


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("requirement", REQUIREMENTS)
def test_wheel_is_a_real_wheel_of_the_pinned_release(wheels: Wheels, requirement: str) -> None:
    name, version = requirement.split("==")
    path = wheels[requirement]
    assert path.is_file() and path.suffix == ".whl"
    with zipfile.ZipFile(path) as zf:
        metadata_name = f"{name}-{version}.dist-info/METADATA"
        assert metadata_name in zf.namelist()
        metadata = HeaderParser().parsestr(zf.read(metadata_name).decode("utf-8"))
    assert (metadata["Name"], metadata["Version"]) == (name, version)


def test_wheels_has_exactly_the_pinned_requirements(wheels: Wheels) -> None:
    assert sorted(wheels) == sorted(REQUIREMENTS)


def test_seed_venv_has_both_packages_installed(seed_venv: SeedVenv) -> None:
    paths = _interpreter_paths(seed_venv.python)
    assert Path(paths["prefix"]) == seed_venv.root
    assert Path(paths["purelib"]) == seed_venv.site_packages
    assert (seed_venv.site_packages / "vllm" / "v1" / "core" / "kv_cache_utils.py").is_file()
    assert (seed_venv.site_packages / "speculators-0.3.0.dist-info").is_dir()
    assert (seed_venv.site_packages / "vllm-0.16.0.dist-info").is_dir()
    assert not list(seed_venv.site_packages.glob("vllm/v1/core/__pycache__/*.pyc")), (
        "installed with --no-compile: no bytecode that could shadow a patched source"
    )


def test_seed_venv_scripts_point_at_the_seed(seed_venv: SeedVenv) -> None:
    """Built elsewhere and moved into the cache: shebangs must name the final location."""
    shebang = (seed_venv.root / "bin" / "pip").read_text().splitlines()[0]
    assert shebang.startswith(f"#!{seed_venv.root}/bin/python")


def test_make_venv_copy_is_independent_of_the_seed(
    wheels: Wheels, seed_venv: SeedVenv, tmp_path: Path
) -> None:
    copy = make_venv(tmp_path / "venv", [wheels[req] for req in SEED_REQUIREMENTS])
    try:
        assert copy.root == tmp_path / "venv"
        paths = _interpreter_paths(copy.python)
        assert Path(paths["prefix"]) == copy.root
        assert Path(paths["purelib"]) == copy.site_packages
        assert copy.site_packages.is_relative_to(copy.root)

        # Writing in place (not via os.replace) is the case a hard-linked copy would get wrong.
        relative = Path("vllm/v1/core/kv_cache_utils.py")
        before = _sha256(seed_venv.site_packages / relative)
        with open(copy.site_packages / relative, "a") as fh:
            fh.write("\n# patched by a test\n")
        (copy.site_packages / "only_in_copy.py").write_text("x = 1\n")
        assert _sha256(copy.site_packages / relative) != before
        assert _sha256(seed_venv.site_packages / relative) == before
        assert not (seed_venv.site_packages / "only_in_copy.py").exists()

        # Scripts run the copy's python (else `DEST/bin/pip` would install into the seed) and
        # RECORD still vouches for them, as if pip had installed the copy in place.
        pip_script = copy.root / "bin" / "pip"
        assert pip_script.read_text().splitlines()[0].startswith(f"#!{copy.root}/bin/python")
        out = subprocess.run(
            [str(pip_script), "--version"], capture_output=True, text=True, check=True
        )
        assert str(copy.site_packages) in out.stdout
        (record,) = copy.site_packages.glob("pip-*.dist-info/RECORD")
        entry = next(
            r for r in record.read_text().splitlines() if r.startswith("../../../bin/pip,")
        )
        assert entry.split(",")[1] == _record_hash(pip_script.read_bytes())
    finally:  # ~1.3 GB: don't leave it in pytest's retained temp dirs
        shutil.rmtree(tmp_path / "venv", ignore_errors=True)
