"""ClusterState: indexes and per-node numbers, exact on small fixtures.

Upstream semantics checked here: kube-scheduler's pod informer drops Succeeded/Failed
pods (pkg/scheduler/scheduler.go newPodInformer field selector), every other assigned
pod counts on its node even while Pending; pod requests follow resource.PodRequests
(init containers and sidecars, reference/scheduling.md §3.1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.gpu.nodes import gpu_nodes
from gpuplane.k8s.cluster import ClusterState
from gpuplane.sources import Manifest, load_paths
from gpuplane.sources.cluster import load_cluster_state

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "cluster" / "small.yaml"

GI = 1024**3
MI = 1024**2


@pytest.fixture(scope="module")
def state() -> ClusterState:
    loaded = load_paths([str(FIXTURE)])
    assert loaded.errors == []
    return ClusterState.from_objects(loaded.objects, source=str(FIXTURE))


def names(pods: list) -> list[str]:
    return [p.metadata.name for p in pods]


def test_pods_by_node_skips_terminal_and_keeps_bound_pending(state: ClusterState) -> None:
    assert sorted(state.pods_by_node) == ["node-a", "node-b", "node-gone"]
    assert names(state.pods_by_node["node-a"]) == ["two-containers", "big-init", "with-sidecar"]
    assert names(state.pods_by_node["node-b"]) == ["creating"]


def test_pending_pods_are_unscheduled_and_not_deleted(state: ClusterState) -> None:
    assert names(state.pending_pods) == ["waiting", "no-status"]


def test_requested_with_init_containers_and_sidecars(state: ClusterState) -> None:
    assert state.requested("node-a") == {
        "cpu": 750 + 2000 + 1100,
        "memory": (1 * GI + 512 * MI) + 4 * GI + 320 * MI,
        "nvidia.com/gpu": 3,
        "pods": 3,
    }
    assert state.requested("node-b") == {"cpu": 1000, "nvidia.com/gpu": 7, "pods": 1}
    assert state.requested("node-c") == {"pods": 0}


def test_allocatable_and_free(state: ClusterState) -> None:
    assert state.allocatable("node-a") == {"cpu": 3920, "memory": 15 * GI, "pods": 110, "nvidia.com/gpu": 4}
    assert state.free("node-a") == {
        "cpu": 70,
        "memory": 15 * GI - ((1 * GI + 512 * MI) + 4 * GI + 320 * MI),
        "pods": 107,
        "nvidia.com/gpu": 1,
    }
    # The device plugin withdrew 2 GPUs that a bound pod still holds: free goes negative.
    assert state.free("node-b")["nvidia.com/gpu"] == -1
    assert state.capacity("node-b")["nvidia.com/gpu"] == 8
    assert state.allocatable("no-such-node") == {}
    assert state.free("no-such-node") == {}


def test_cached_numbers_are_stable(state: ClusterState) -> None:
    assert state.requested("node-a") is state.requested("node-a")
    assert state.allocatable("node-a") is state.allocatable("node-a")


def test_kubernetes_version(state: ClusterState) -> None:
    assert state.kubernetes_version() == "1.31"
    other = ClusterState(state.nodes, [], [], server_version="v1.32.3")
    assert other.kubernetes_version() == "1.32"
    assert ClusterState([], [], []).kubernetes_version() is None


def test_gpu_nodes(state: ClusterState) -> None:
    assert [n.name for n in gpu_nodes(state)] == ["node-a", "node-b", "node-d"]


def test_node_ready(state: ClusterState) -> None:
    assert state.node_ready("node-a") is True
    assert state.node_ready("node-b") is False
    assert state.node_ready("node-c") is None


def test_object_indexes(state: ClusterState) -> None:
    assert sorted(state.namespaces) == ["team-a", "team-b"]
    assert list(state.priority_classes) == ["high"]
    assert list(state.storage_classes) == ["gp3"]
    assert list(state.pvcs) == [("team-a", "data")]
    assert list(state.pvs) == ["pv-1"]
    assert [q.name for q in state.quotas] == ["gpu"]
    assert [q.name for q in state.limit_ranges] == ["defaults"]
    assert [q.name for q in state.pdbs] == ["pdb"]
    assert [j.name for j in state.by_kind("Job")] == ["k8s-job", "vc-job"]
    assert [j.name for j in state.by_kind("Job", "batch")] == ["k8s-job"]
    assert [j.name for j in state.by_kind("Job", "batch.volcano.sh")] == ["vc-job"]
    assert state.by_kind("Pod") == []  # pods and nodes are typed, not plain objects
    assert len(state.pods) == 11 and len(state.nodes) == 4


def test_from_objects_reports_bad_pods_without_raising() -> None:
    bad = Manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "bad"},
            "spec": {"containers": "not-a-list"},
        },
        "bad.yaml",
        3,
    )
    good = Manifest(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok"}, "spec": {"containers": []}}
    )
    state = ClusterState.from_objects([bad, good])
    assert names(state.pods) == ["ok"]
    assert len(state.errors) == 1
    assert str(state.errors[0]).startswith("bad.yaml:3: Pod bad: Expected `array`, got `str`")


def test_load_cluster_state_reads_a_snapshot() -> None:
    state, errors = load_cluster_state(str(FIXTURE))
    assert errors == []
    assert state.requested("node-a")["cpu"] == 3850
    assert names(state.pending_pods) == ["waiting", "no-status"]


def test_load_cluster_state_missing_file() -> None:
    state, errors = load_cluster_state("/nonexistent/cluster.yaml")
    assert [str(e) for e in errors] == ["/nonexistent/cluster.yaml: no such file or directory"]
    assert state.nodes == [] and state.pods == []
