"""Review findings in diagnose: owner groups, a failing scheduler model, report aggregations."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.diagnose.engine import run_diagnose, workload_objects
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import pod_from_dict
from gpuplane.report.html import render_html
from gpuplane.sources import load_paths
from gpuplane.sources.manifest import Manifest

REVIEW = Path(__file__).resolve().parent.parent / "fixtures" / "simulate" / "review"


def _owned_pod(name: str, api_version: str, kind: str, owner: str) -> object:
    return pod_from_dict(
        {
            "metadata": {
                "name": name,
                "namespace": "ml",
                "ownerReferences": [
                    {"apiVersion": api_version, "kind": kind, "name": owner, "controller": True}
                ],
            },
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Running"},
        }
    )


def test_owner_match_includes_the_api_group() -> None:
    volcano_job = Manifest(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": "train", "namespace": "ml"},
        }
    )
    pods = [
        _owned_pod("train-0", "batch/v1", "Job", "train"),  # a batch Job named like the Volcano Job
        _owned_pod("vc-0", "batch.volcano.sh/v1alpha1", "Job", "train"),  # captured by the Volcano Job
    ]
    state = ClusterState([], pods, [volcano_job])
    names = [obj.name for obj in workload_objects(state)]
    assert names == ["train", "train-0"]


def test_a_failing_scheduler_model_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpuplane.scheduler.scheduler as scheduler_module

    class Broken:
        def __init__(self, state: object) -> None:
            raise OverflowError("int too big")

    monkeypatch.setattr(scheduler_module, "Scheduler", Broken)
    result = CliRunner().invoke(
        cli, ["diagnose", "--cluster", str(REVIEW / "pending-huge.yaml"), "-f", "json"]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr == (
        "gpuplane: the kube-scheduler model failed on this cluster (OverflowError: int too big); "
        "Pending pods are explained from their PodScheduled condition only\n"
    )


def test_report_data_is_computed_by_the_engine() -> None:
    state = ClusterState.from_objects(load_paths([str(REVIEW / "pending-huge.yaml")]).objects)
    assert run_diagnose(state).report_data is None  # text and JSON do not pay for it
    result = run_diagnose(state, report_data=True)
    data = result.report_data
    assert data is not None
    assert data.pending_reasons == {"Insufficient nvidia.com/gpu": 1}
    assert data.namespaces == [("default", 0, (1 << 63) - 1)]
    frag = data.fragmentation
    # a request of 10^20 GPUs (saturated to int64) no longer asks for 10^18 histogram bins
    assert [label for label, _ in frag.bins][-1] == "64+"
    assert (frag.free_units, frag.schedulable_nodes, frag.nodes_hosting_largest) == (8, 1, 0)
    page = render_html(result)
    assert "the largest Pending pod asks for 9223372036854775807 on one node: 0 node(s) can host it" in page
    with pytest.raises(ValueError, match=r"render_html needs run_diagnose\(\.\.\., report_data=True\)"):
        render_html(run_diagnose(state))
