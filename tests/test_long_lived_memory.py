"""A process that runs many commands (the MCP server, a test run, bench/fuzz.py) must not grow with
each one (issue 11: the fuzz harness reached 2 GB at 6,000 cases). Three causes, one test each:
``lint`` left the cyclic GC off for the rest of the process, diagnose's facts cache kept every
ClusterState it saw, and ``read_cluster`` froze big clusters out of the GC in any process."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.sources import cluster as cluster_source
from gpuplane.sources import gc_policy

ROOT = Path(__file__).resolve().parents[1]
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
MANIFEST = str(ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml")


def test_lint_in_process_leaves_the_gc_as_it_found_it() -> None:
    assert gc.isenabled()
    res = CliRunner().invoke(cli, ["lint", MANIFEST])
    assert res.exit_code == 1, res.output
    assert gc.isenabled()


def test_lint_keeps_a_disabled_gc_disabled() -> None:
    gc.disable()
    try:
        CliRunner().invoke(cli, ["lint", MANIFEST])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_diagnosed_cluster_state_is_freed() -> None:
    from gpuplane.diagnose.engine import run_diagnose

    state, errors = cluster_source.load_cluster_state(DEMO)
    assert errors == []
    run_diagnose(state)
    assert "diagnose.facts" in state.derived
    ref = weakref.ref(state)
    del state
    gc.collect()
    assert ref() is None


def test_read_cluster_freezes_only_when_the_process_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_source, "FREEZE_ABOVE", 0)
    # the default; a test that ran gpuplane.cli.main.main() in this process has turned it on
    monkeypatch.setitem(gc_policy._STATE, "freeze", False)
    before = gc.get_freeze_count()
    try:
        cluster_source.read_cluster(DEMO)
        assert gc.get_freeze_count() == before
        gc_policy.allow_freeze()  # what the console script's main() does
        cluster_source.read_cluster(DEMO)
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


def test_diagnose_freezes_what_it_built_only_after_a_frozen_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """``paused_gc(then_freeze=True)`` (the diagnose command, load to output) freezes what the
    command leaves alive only in a process that may freeze and froze the cluster it read:
    never in a test run or the MCP server, never after a small cluster."""
    monkeypatch.setitem(gc_policy._STATE, "freeze", False)
    gc.unfreeze()
    try:
        res = CliRunner().invoke(cli, ["diagnose", "--cluster", DEMO, "-f", "json"])
        assert res.exit_code == 0, res.output
        assert gc.get_freeze_count() == 0 and gc.isenabled()
        gc_policy.allow_freeze()  # what the console script's main() does; the demo is no big cluster
        res = CliRunner().invoke(cli, ["diagnose", "--cluster", DEMO, "-f", "json"])
        assert res.exit_code == 0, res.output
        assert gc.get_freeze_count() == 0 and gc.isenabled()
        monkeypatch.setattr(cluster_source, "FREEZE_ABOVE", 0)  # now it is: read_cluster freezes it
        res = CliRunner().invoke(cli, ["diagnose", "--cluster", DEMO, "-f", "json"])
        assert res.exit_code == 0, res.output
        frozen = gc.get_freeze_count()
        assert frozen > 0 and gc.isenabled()
        with gc_policy.paused_gc(then_freeze=True):
            built = [[i] for i in range(1000)]  # what a command leaves alive
        assert gc.get_freeze_count() >= frozen + len(built) and gc.isenabled()
    finally:
        gc.unfreeze()
