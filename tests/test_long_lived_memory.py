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
