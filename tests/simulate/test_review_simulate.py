"""Review findings in the scheduler model and simulate: int64 overflow, scoring, timing, autoscaler."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.gpu.catalog import InstanceType
from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.scoring import resource_score, resource_scores
from gpuplane.scheduler.simulate.autoscaler import _requirement_ok
from gpuplane.scheduler.simulate.inputs import apply_inputs
from gpuplane.scheduler.simulate.scenario import ScenarioError, timing
from gpuplane.sources.manifest import Manifest

REVIEW = Path(__file__).resolve().parent.parent / "fixtures" / "simulate" / "review"


def test_simulate_on_a_saturated_node_neither_raises_nor_wraps() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "--cluster",
            str(REVIEW / "huge-node.yaml"),
            str(REVIEW / "huge-pod.yaml"),
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert result.exception is None
    # GPU totals are exact Python sums of the two saturated nodes, never a wrapped negative
    assert '"gpus_total": 18446744073709551614' in result.stdout


def test_why_pending_on_a_request_above_int64() -> None:
    result = CliRunner().invoke(
        cli, ["why-pending", "--cluster", str(REVIEW / "pending-huge.yaml"), "-f", "json"]
    )
    assert result.exit_code == 0 and result.exception is None
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in result.stdout
    assert "9223372036854775807" in result.stdout


@pytest.mark.parametrize(
    ("cpu_alloc", "cpu_used", "mem_alloc", "mem_used", "score"),
    [
        (4000, 1000, 8 << 30, 2 << 30, 75 + 100),  # both present: (75 + 75) / 2, balanced 100
        (4000, 1000, 8 << 30, 6 << 30, 50 + 75),  # (75 + 25) / 2 = 50; std (0.75-0.25)/2 -> 75
        (4000, 1000, 0, 200 << 20, 75 + 100),  # memory allocatable 0: skipped, divide by 1 (was 37)
        (0, 100, 0, 100, 0 + 100),  # nothing allocatable: LeastAllocated 0, Balanced 100
        (4000, 5000, 8 << 30, 2 << 30, 37 + 62),  # over-requested cpu scores 0, its fraction capped at 1
    ],
)
def test_one_integer_scorer_for_both_paths(
    cpu_alloc: int, cpu_used: int, mem_alloc: int, mem_used: int, score: int
) -> None:
    assert resource_score(cpu_alloc, cpu_used, mem_alloc, mem_used) == score
    vector = resource_scores(
        *(np.array([v], dtype=np.int64) for v in (cpu_alloc, cpu_used, mem_alloc, mem_used))
    )
    assert vector.tolist() == [score]


def _job(annotations: dict[str, str]) -> Manifest:
    return Manifest(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "ml", "annotations": annotations},
        }
    )


@pytest.mark.parametrize(
    ("annotation", "raw", "message"),
    [
        (
            "gpuplane.io/arrival-s",
            "inf",
            "Job ml/j: gpuplane.io/arrival-s must be a finite number, got 'inf'",
        ),
        (
            "gpuplane.io/duration-s",
            "1e400",
            "Job ml/j: gpuplane.io/duration-s must be a finite number, got '1e400'",
        ),
        (
            "gpuplane.io/arrival-s",
            "nan",
            "Job ml/j: gpuplane.io/arrival-s must be a finite number, got 'nan'",
        ),
        ("gpuplane.io/duration-s", "-5", "Job ml/j: gpuplane.io/duration-s must be >= 0, got '-5'"),
    ],
)
def test_timing_annotations_must_be_finite_non_negative(annotation: str, raw: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        timing(_job({annotation: raw}), None)
    assert str(info.value) == message


def test_timing_accepts_finite_numbers() -> None:
    found = timing(_job({"gpuplane.io/arrival-s": "30", "gpuplane.io/duration-s": "1.5"}), None)
    assert (found.arrival_s, found.duration_s) == (30.0, 1.5)


def _instance(name: str, gpus: int) -> InstanceType:
    return InstanceType("aws", name, "H100-80GB", gpus, 192, 2048.0, "test")


def test_karpenter_requirements_use_the_scheduler_selector_semantics() -> None:
    p5 = _instance("p5.48xlarge", 8)
    names = {"H100-80GB": "h100"}
    count = "karpenter.k8s.aws/instance-gpu-count"
    assert _requirement_ok({"key": count, "operator": "Gt", "values": ["4"]}, p5, names) is True
    assert _requirement_ok({"key": count, "operator": "Gte", "values": ["8"]}, p5, names) is True
    assert _requirement_ok({"key": count, "operator": "Lte", "values": ["7"]}, p5, names) is False
    assert _requirement_ok({"key": count, "operator": "Gt", "values": ["x"]}, p5, names) is False
    assert _requirement_ok({"key": count, "operator": "In", "values": [8]}, p5, names) is True
    assert (
        _requirement_ok(
            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": []}, p5, names
        )
        is False
    )
    assert (
        _requirement_ok({"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "Exists"}, p5, names)
        is True
    )
    assert (
        _requirement_ok({"key": count, "operator": "DoesNotExist"}, _instance("m5.large", 0), names) is True
    )
    assert _requirement_ok({"key": "team", "operator": "In", "values": ["a"]}, p5, names) is None


def test_pvc_defaulting_uses_the_upstream_default_class() -> None:
    def sc(name: str, annotations: dict[str, str], created: str) -> Manifest:
        return Manifest(
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": name, "annotations": annotations, "creationTimestamp": created},
            }
        )

    cluster = ClusterState(
        [],
        [],
        [
            sc("old", {"storageclass.kubernetes.io/is-default-class": "true"}, "2023-01-01T00:00:00Z"),
            sc(
                "new-beta",
                {"storageclass.beta.kubernetes.io/is-default-class": "true"},
                "2024-01-01T00:00:00Z",
            ),
        ],
    )
    pvc = Manifest(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "ml"},
            "spec": {"resources": {}},
        }
    )
    applied = apply_inputs(cluster, [pvc])
    claims = [o for o in applied.cluster_objects if o.kind == "PersistentVolumeClaim"]
    assert claims[0].data["spec"]["storageClassName"] == "new-beta"
