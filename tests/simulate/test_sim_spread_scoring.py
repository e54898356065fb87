"""simulate's fast path defers to the per-node cycle for pods PodTopologySpread scores.

podtopologyspread/scoring.go scores a pod's ScheduleAnyway constraints, and the system default
constraints for a pod with none that a Service / ReplicaSet / StatefulSet /
ReplicationController selects (common.go ``buildDefaultConstraints``): those scores depend on
the pods on each node, which the node classes of the fast path do not see.
"""

from __future__ import annotations

import random
from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Pod, pod_from_dict
from gpuplane.scheduler.framework import ScheduleResult
from gpuplane.scheduler.simulate.state import SimCluster
from gpuplane.sources.manifest import Manifest


def _node(name: str, zone: str) -> dict:
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def _pod(name: str, labels: dict[str, str], cpu: str, spec: dict[str, Any] | None = None) -> Pod:
    requests = {"cpu": cpu, "memory": "1Gi"} if cpu else {}
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": requests}}]}
    body.update(spec or {})
    return pod_from_dict(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "d", "labels": labels},
            "spec": body,
        }
    )


SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "d"},
    "spec": {"selector": {"app": "web"}},
}
SOFT_ZONE = {
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "batch"}},
        }
    ]
}


def _state() -> ClusterState:
    nodes = [_node(f"n{i}", "ab"[i % 2] if i < 6 else "a") for i in range(10)]
    return ClusterState.from_objects([Manifest(n) for n in [*nodes, SERVICE]])


def test_spread_scored_pods_take_the_per_node_path() -> None:
    fast = SimCluster(_state())
    placer = fast.placer
    assert placer is not None
    assert placer._shape(_pod("plain", {"app": "other"}, "1")) is not None
    assert placer._shape(_pod("member", {"app": "web"}, "1")) is None  # system defaults (Service)
    assert placer._shape(_pod("soft", {"app": "batch"}, "1", SOFT_ZONE)) is None


def test_fast_and_full_cycles_agree_with_spread_scoring() -> None:
    rng = random.Random(11)
    state = _state()
    fast, slow = SimCluster(state), SimCluster(state, fast=False)
    for k in range(60):
        kind = rng.choice(["plain", "web", "batch"])
        labels = {"app": "other" if kind == "plain" else kind}
        pod = _pod(
            f"p{k}", labels, rng.choice(["", "500m", "2", "3"]), SOFT_ZONE if kind == "batch" else None
        )
        a, b = fast.schedule(pod), slow.schedule(pod)
        assert type(a) is type(b)
        if isinstance(a, ScheduleResult):
            assert isinstance(b, ScheduleResult)
            assert a.node == b.node
            fast.bind(pod, a.node)
            slow.bind(pod, b.node)
