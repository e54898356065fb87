"""Every ../shared/realworld/scheduler case: the FailedScheduling text the real kube-scheduler
wrote (``pods``), the pods it placed (``schedulable``) and those it never tried
(``no_scheduling_attempt``), as ``score.py scheduler`` checks them. Skips where ../shared is absent."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.sources.cluster import load_cluster_state
from gpuplane.why_pending.explain import pending

# ../shared beside the clone (the root conftest's SHARED; not imported: a nested conftest module
# of the same name would shadow it when several test folders run together).
CASES = Path(__file__).resolve().parents[3] / "shared" / "realworld" / "scheduler"
CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir()) if CASES.is_dir() else []


@pytest.mark.parametrize("case", CASE_DIRS or [None], ids=[p.name for p in CASE_DIRS] or ["absent"])
def test_realworld_scheduler_case(case: Path | None) -> None:
    if case is None:
        pytest.skip("../shared/realworld/scheduler is not beside this clone")
    expect = yaml.safe_load((case / "expect.yaml").read_text())
    state, errors = load_cluster_state(str(case / "cluster.yaml"))
    assert not errors
    version = str(expect.get("version", "v1.34.1")).lstrip("v")
    got = {e.pod.key: e for e in pending(Scheduler(state, version=version))}
    for key, text in (expect.get("pods") or {}).items():
        assert got[key].message == text, key
    for key in expect.get("schedulable") or []:
        assert got[key].stage == "schedulable", key
    for key in expect.get("no_scheduling_attempt") or []:
        assert got[key].stage not in ("scheduler", "schedulable"), key
        assert got[key].message == "", key
