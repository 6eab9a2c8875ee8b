"""Issue 35 item 13: the smaller edges, one test each (real CLI processes, no mocks).

- ``--set ' msg=x'`` was taken as ``msg``: a name with spaces around it is refused, in one line.
- ``report -o review.html`` wrote Markdown: without ``--format`` the file's suffix says which.
- Rich turned ``:b:`` in a host name into an emoji in the error: text is printed as given.
- hosts.toml saved with a UTF-8 BOM (Notepad) was "invalid TOML": the BOM is read past.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness
from tests.support.cli import run_cli

PIPELINE = """
[params]
msg = "default"

[steps.say]
command = ["{python}", "-c", "import sys; print(sys.argv[1])", "{msg}"]
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


@pytest.mark.parametrize("item", [" msg=x", "msg =x", " msg =x"])
def test_a_set_name_with_spaces_is_refused(local: Harness, item: str) -> None:
    r = local("run", "say", "-t", "local", "--set", item)
    assert r.code == 2, r.out + r.err
    name = item.partition("=")[0]
    assert f"error: --set {item!r}: the name {name!r} has spaces around it" in r.err
    assert "hint: write it without them: --set msg=x" in r.err
    assert not list((local.workdir / ".harness").glob("runs/*"))
    ok = local("run", "say", "-t", "local", "--set", "msg= x")  # the value's spaces are its own
    assert ok.code == 0 and ok.out == " x\n", ok.err


@pytest.mark.parametrize(
    ("name", "starts"),
    [("review.html", "<!doctype html>"), ("review.json", "{"), ("review.md", "# ")],
)
def test_report_output_format_follows_the_suffix(
    cli_env: dict[str, str], tmp_path: Path, name: str, starts: str
) -> None:
    out = tmp_path / name
    r = run_cli("report", "-t", "local", "-o", str(out), env=cli_env)
    assert r.code in (0, 1), r.err
    text = out.read_text()
    assert text.lstrip().startswith(starts), text[:200]
    if name.endswith(".json"):
        assert json.loads(text)["target"] == "local"
    forced = run_cli("report", "-t", "local", "--format", "md", "-o", str(out), env=cli_env)
    assert forced.code in (0, 1) and out.read_text().startswith("# ")  # --format wins


def test_a_host_name_is_printed_as_written(cli_env: dict[str, str], tmp_path: Path) -> None:
    r = run_cli("probe", "json", "-t", "gpu:b:box", env=cli_env)
    assert r.code == 2, r.out + r.err
    assert "gpu:b:box" in r.err and "🅱" not in r.err, r.err


def test_a_hosts_file_with_a_bom_is_read(cli_env: dict[str, str], tmp_path: Path) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_bytes(b"\xef\xbb\xbf" + b'[hosts.box]\naddress = "127.0.0.1"\n')
    r = run_cli("hosts", env={**cli_env, "HARNESS_HOSTS": str(hosts)})
    assert r.code == 0, r.out + r.err
    assert "box" in r.out and "invalid TOML" not in r.err
