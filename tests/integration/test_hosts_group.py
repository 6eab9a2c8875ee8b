"""Several hosts as one target, over real sshd in network namespaces (tests/support/netns.py).

Each node is its own network namespace with its own address and sshd; each gets its own venv
holding tinypkg 1.0 (the handwritten dist of the patch fault tests), so a test can make one node
differ. Nothing leaves the namespaces and the private bridge.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import FIXTURES, installed, make_tiny
from tests.support.cli import run_cli
from tests.support.netns import Node, available, inventory, nodes

pytestmark = pytest.mark.ssh


def add_dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")


class Cluster:
    def __init__(self, root: Path, members: list[Node]) -> None:
        self.root, self.nodes = root, members
        self.venvs = [make_tiny(root / f"venv-{n.name}") for n in members]
        pythons = {n.name: str(v.python) for n, v in zip(members, self.venvs, strict=True)}
        self.env = inventory(root, members, pythons)

    def __call__(self, *args: str, **env: str):  # type: ignore[no-untyped-def]
        return run_cli(*args, env={**self.env, **env})


@pytest.fixture(scope="module")
def cluster(three_nodes: list[Node], tmp_path_factory: pytest.TempPathFactory) -> Cluster:
    return Cluster(tmp_path_factory.mktemp("cluster"), three_nodes)


def test_a_group_is_one_target_for_any_command(cluster: Cluster) -> None:
    r = cluster("patches", "-t", "nodes", "--patches", str(FIXTURES / "good"))
    assert r.code == 0, r.out + r.err
    for n in cluster.nodes:
        assert f"── {n.name} (exit 0)" in r.out
    assert r.out.strip().splitlines()[-1] == "── hxn1 ok · hxn2 ok · hxn3 ok"
    r = cluster("patches", "-t", "hxn1,hxn3", "--json", "--patches", str(FIXTURES / "good"))
    assert sorted(json.loads(r.out)) == ["hxn1", "hxn3"]
    r = cluster("patches", "-t", "hxn1,nope")
    assert r.code == 2 and "'nope' is not a host or group" in r.err


def test_sameness_blocks_on_a_version_that_differs_naming_each_node(cluster: Cluster) -> None:
    for v, version in zip(cluster.venvs, ("2.11.0", "2.11.0", "2.10.0"), strict=True):
        add_dist(v.site, "torch", version)
    r = cluster("hosts", "--check", "-t", "nodes")
    assert r.code == 1, r.out + r.err
    assert "torch differs across hosts: hxn1 2.11.0, hxn2 2.11.0, hxn3 2.10.0" in r.out
    r = cluster("hosts", "--check", "-t", "hxn1,hxn2", "--json")
    assert r.code == 0 and json.loads(r.out)["differences"] == []
    for v in cluster.venvs:  # leave the cluster as it was for the next tests
        for info in v.site.glob("torch-*.dist-info"):
            for f in info.iterdir():
                f.unlink()
            info.rmdir()


def test_a_conflict_on_the_second_node_writes_nothing_on_either(cluster: Cluster) -> None:
    first, second = cluster.venvs[0], cluster.venvs[1]
    before = [installed(first.site), installed(second.site)]
    gamma = second.read("tinypkg/gamma.py")
    # another build of tinypkg 1.0 on the second node: the line the patch changes differs
    second.reinstall(
        "tinypkg/gamma.py", gamma.replace(b"self.model.model.layers", b"self.model.layers")
    )
    try:
        changed = installed(second.site)
        r = cluster("apply-patches", "-t", "hxn1,hxn2", "--patches", str(FIXTURES / "good"))
        assert r.code != 0
        assert "hxn1: ready" in r.out and "hxn2: refused:" in r.out
        assert "nothing was written on any host" in r.out
        assert installed(first.site) == before[0] and installed(second.site) == changed
    finally:
        second.reinstall("tinypkg/gamma.py", gamma)
    assert installed(second.site) == before[1]


def test_every_host_or_none_then_revert_everywhere(cluster: Cluster) -> None:
    pristine = [installed(v.site) for v in cluster.venvs]
    good = ("--patches", str(FIXTURES / "good"))
    r = cluster("apply-patches", "-t", "nodes", *good)
    assert r.code == 0, r.out + r.err
    assert "the series is applied on all 3 hosts" in r.out
    assert all(installed(v.site) != p for v, p in zip(cluster.venvs, pristine, strict=True))
    patched = (FIXTURES / "tinypkg-1.0-patched" / "tinypkg" / "alpha.py").read_bytes()
    assert all(v.read("tinypkg/alpha.py") == patched for v in cluster.venvs)
    r = cluster("revert-patches", "-t", "nodes", *good)
    assert r.code == 0, r.out + r.err
    assert [installed(v.site) for v in cluster.venvs] == pristine


def test_a_link_that_drops_between_prepare_and_commit_leaves_every_host_as_it_was(
    tmp_path: Path,
) -> None:
    """Prepare succeeds on both; then the second node's sshd dies. The first node, already
    committed, is put back: both end as they were, never one of each."""
    why = available()
    if why:
        pytest.skip(why)
    with nodes(tmp_path, 2) as members:
        c = Cluster(tmp_path, members)
        pristine = [installed(v.site) for v in c.venvs]
        full = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **c.env,
                "HARNESS_GROUP_COMMIT_DELAY_S": "4"}  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "apply-patches", "-t", "nodes",
             "--patches", str(FIXTURES / "good")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
        )  # fmt: skip
        assert proc.stderr is not None  # prepared on both (two probes over SSH), now paused
        said = proc.stderr.readline()
        assert said.startswith("harness: prepared on 2 hosts; committing in 4 s"), said
        listener = members[1].ssh.pid
        for pid in [*_children(listener), listener]:
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode != 0, out + err
        assert "hxn1: applied" in out and "hxn2: failed" in out
        assert "rolled back on hxn1" in out and "every host is as it was" in out
        assert [installed(v.site) for v in c.venvs] == pristine


def _children(pid: int) -> list[int]:
    from tests.support.sshd import _descendants

    return _descendants(pid)
