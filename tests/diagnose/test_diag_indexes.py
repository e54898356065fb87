"""diagnose's per-cluster indexes answer what the naive walks answer (issue 14 item 1).

- ``ClusterFacts.free_nodes`` / ``free_by_node`` (the free room of one resource, built once)
  against ``ClusterState.free`` of every node;
- ``fragment_frees`` (gpu-fragmentation's node set), with the scheduler model and without it,
  against the walk it replaced: ``ClusterState.free`` of every node the model names (or of every
  GPU node), for every Pending pod;

on random clusters (hypothesis), plus a count of the work: the free room of a resource is read
once per node, however many Pending pods ask.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.diagnose.facts import ClusterFacts, facts_for
from gpuplane.diagnose.rules.capacity import _only_short_nodes, fragment_frees
from gpuplane.gpu.nodes import gpu_nodes
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.selectors import pod_matches_required_node_affinity
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.sources.manifest import Manifest

GPU = "nvidia.com/gpu"
MIG = "nvidia.com/mig-1g.10gb"
RESOURCES = (GPU, MIG)
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _node(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    allocatable: dict[str, str] = {"cpu": spec["cpu"], "memory": "64Gi", "pods": "110"}
    for resource, count in spec["devices"].items():
        allocatable[resource] = str(count)
    labels = {"kubernetes.io/hostname": name}
    if spec["pool"]:
        labels["pool"] = spec["pool"]
    status: dict[str, Any] = {"allocatable": allocatable, "capacity": allocatable}
    if spec["ready"] is not None:
        status["conditions"] = [{"type": "Ready", "status": "True" if spec["ready"] else "False"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": spec["cordoned"], **({"taints": [TAINT]} if spec["tainted"] else {})},
        "status": status,
    }


def _pod(name: str, spec: dict[str, Any], nodes: int) -> dict[str, Any]:
    requests = {"cpu": spec["cpu"], **{r: str(n) for r, n in spec["devices"].items()}}
    limits = {r: str(n) for r, n in spec["devices"].items()}
    body: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "busybox", "resources": {"requests": requests, "limits": limits}}
        ]
    }
    if spec["tolerates"]:
        body["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    if spec["pool"]:
        body["nodeSelector"] = {"pool": spec["pool"]}
    status: dict[str, Any] = {"phase": "Pending"}
    if spec["node"] is not None and spec["node"] < nodes:
        body["nodeName"] = f"n{spec['node']}"
        status = {"phase": "Running"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": body,
        "status": status,
    }


devices_st = st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 8), max_size=2)
node_st = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(("4", "32")),
        "devices": devices_st,
        "pool": st.sampled_from((None, "a100", "h100")),
        "ready": st.sampled_from((None, True, False)),
        "cordoned": st.booleans(),
        "tainted": st.booleans(),
    }
)
pod_st = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(("100m", "8")),
        "devices": st.dictionaries(st.sampled_from(RESOURCES), st.integers(1, 8), max_size=2),
        "pool": st.sampled_from((None, "a100", "h100")),
        "tolerates": st.booleans(),
        "node": st.none() | st.integers(0, 7),
    }
)
cluster_st = st.tuples(st.lists(node_st, min_size=1, max_size=8), st.lists(pod_st, max_size=12))


def _state(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> ClusterState:
    docs = [_node(f"n{i}", spec) for i, spec in enumerate(nodes)]
    docs += [_pod(f"p{i}", spec, len(nodes)) for i, spec in enumerate(pods)]
    return ClusterState.from_objects([Manifest(doc) for doc in docs])


def _naive_free(state: ClusterState, name: str, resource: str) -> int:
    return state.free(name).get(resource, 0)


def _naive_fragment_frees(facts: ClusterFacts, pod: Pod, resource: str) -> dict[str, int]:
    """gpu-fragmentation's node set as it was computed before the index: ``ClusterState.free``
    of every node the model names, or of every GPU node."""
    state = facts.state
    nodes = _only_short_nodes(facts, pod, resource)
    if nodes is not None:
        return {n: _naive_free(state, n, resource) for n in nodes if _naive_free(state, n, resource) > 0}
    frees: dict[str, int] = {}
    for node in gpu_nodes(state):
        name = node.metadata.name
        if node.spec.unschedulable or state.node_ready(name) is False:
            continue
        free = _naive_free(state, name, resource)
        if free <= 0:
            continue
        if find_untolerated_taint(node.spec.taints, pod.spec.tolerations) is not None:
            continue
        if not pod_matches_required_node_affinity(pod, node):
            continue
        frees[name] = free
    return frees


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st)
def test_free_nodes_equal_the_free_room_of_every_node(cluster: tuple[list, list]) -> None:
    state = _state(*cluster)
    facts = facts_for(state)
    for resource in RESOURCES:
        expected = [
            (node.metadata.name, _naive_free(state, node.metadata.name, resource))
            for node in state.nodes
            if _naive_free(state, node.metadata.name, resource) > 0
        ]
        assert [(node.metadata.name, free) for node, free in facts.free_nodes(resource)] == expected
        assert facts.free_by_node(resource) == dict(expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st, st.booleans())
def test_fragment_frees_equal_the_walk_over_every_node(cluster: tuple[list, list], model: bool) -> None:
    state = _state(*cluster)
    facts = facts_for(state)
    if not model:
        facts._scheduler_error = "off for this test"  # the fallback node set (no scheduler model)
    for pod in facts.pending_gpu_pods():
        for resource in sorted(facts.gpu_requests(pod)):
            found = fragment_frees(facts, pod, resource)
            expected = _naive_fragment_frees(facts, pod, resource)
            assert found == expected
            assert list(found) == list(expected)  # same order too


def test_free_room_is_read_once_per_node_whatever_the_pending_pods(monkeypatch: Any) -> None:
    """100 Pending GPU pods on 40 GPU nodes: each node's free map is built once for the
    resource, not once per pod (the walk built 4,000 of them)."""
    nodes = [
        {"cpu": "32", "devices": {GPU: 8}, "pool": None, "ready": True, "cordoned": False, "tainted": False}
    ] * 40
    busy = [
        {"cpu": "100m", "devices": {GPU: 5}, "pool": None, "tolerates": False, "node": i} for i in range(8)
    ]
    pending = [{"cpu": "100m", "devices": {GPU: 8}, "pool": None, "tolerates": False, "node": None}] * 100
    docs = [_node(f"n{i}", spec) for i, spec in enumerate(nodes)]
    docs += [_pod(f"p{i}", spec, 8) for i, spec in enumerate(busy + pending)]
    state = ClusterState.from_objects([Manifest(doc) for doc in docs])
    facts = facts_for(state)
    for pod in facts.pending_gpu_pods():
        facts.explained(pod)  # the scheduler model reads every node itself: not counted here
    reads: list[str] = []
    free = ClusterState.free
    monkeypatch.setattr(ClusterState, "free", lambda self, n: reads.append(n) or free(self, n))
    for pod in facts.pending_gpu_pods():
        fragment_frees(facts, pod, GPU)
    assert len(facts.pending_gpu_pods()) == 100
    assert reads == [f"n{i}" for i in range(40)]


# -- the GPU-stack pods by component (gpu-node-not-advertising) -----------------------------------

STACK = (
    "nvidia-driver-daemonset",
    "nvidia-container-toolkit-daemonset",
    "nvidia-operator-validator",
    "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery",
    "gpu-operator",
    "web",  # not a GPU-stack pod
)
stack_pod_st = st.fixed_dictionaries(
    {
        "app": st.sampled_from(STACK),
        "node": st.none() | st.integers(0, 5),
        "phase": st.sampled_from(("Running", "Failed", "Pending", "Succeeded")),
    }
)
dark_node_st = st.fixed_dictionaries(
    {
        "present": st.booleans(),
        "gpus": st.sampled_from((0, 0, 4)),
        "ready": st.booleans(),
        "plugin_label": st.sampled_from((None, "true", "false")),
    }
)


def _dark_state(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> ClusterState:
    docs: list[dict[str, Any]] = []
    for i, spec in enumerate(nodes):
        labels = {"kubernetes.io/hostname": f"n{i}", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
        if spec["present"]:
            labels["nvidia.com/gpu.present"] = "true"
        if spec["plugin_label"] is not None:
            labels["nvidia.com/gpu.deploy.device-plugin"] = spec["plugin_label"]
        allocatable = {"cpu": "32", "memory": "64Gi", "pods": "110"}
        if spec["gpus"]:
            allocatable[GPU] = str(spec["gpus"])
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"n{i}", "labels": labels},
                "status": {
                    "allocatable": allocatable,
                    "capacity": allocatable,
                    "conditions": [{"type": "Ready", "status": "True" if spec["ready"] else "False"}],
                },
            }
        )
    for i, spec in enumerate(pods):
        body: dict[str, Any] = {"containers": [{"name": "c", "image": "nvcr.io/nvidia/x"}]}
        if spec["node"] is not None and spec["node"] < len(nodes):
            body["nodeName"] = f"n{spec['node']}"
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{spec['app']}-{i}",
                    "namespace": "gpu-operator",
                    "labels": {"app": spec["app"]},
                },
                "spec": body,
                "status": {"phase": spec["phase"]},
            }
        )
    return ClusterState.from_objects([Manifest(doc) for doc in docs])


def _not_advertising_json(state: ClusterState) -> list[dict[str, Any]]:
    from gpuplane.lint.context import LintContext
    from gpuplane.rule_catalog import get_rule

    ctx = LintContext([], [], state)
    ctx.rule = meta = get_rule("gpu-node-not-advertising")
    assert meta is not None
    return [finding.to_json() for finding in meta.check(ctx)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(dark_node_st, min_size=1, max_size=6), st.lists(stack_pod_st, max_size=14))
def test_component_pods_of_equal_the_filter_of_every_stack_pod(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> None:
    state = _dark_state(nodes, pods)
    facts = facts_for(state)
    for cid in ("driver", "device-plugin", "gpu-operator", "dcgm", "no-such-component"):
        assert facts.component_pods_of(cid) == [p for c, p in facts.component_pods() if c.id == cid]
    # the rule over the index says exactly what it said over the filter
    indexed = _not_advertising_json(state)
    naive_state = _dark_state(nodes, pods)
    naive = facts_for(naive_state)
    naive.component_pods_of = lambda component: [  # type: ignore[method-assign]
        p for c, p in naive.component_pods() if c.id == component
    ]
    assert indexed == _not_advertising_json(naive_state)


def test_dark_nodes_read_the_stack_pods_once(monkeypatch: Any) -> None:
    """60 labelled GPU nodes advertising nothing, half without a device-plugin pod: the stack
    pods are filtered by component once, not once per dark node."""
    nodes = [{"present": True, "gpus": 0, "ready": True, "plugin_label": None}] * 60
    pods = [
        {"app": app, "node": i, "phase": "Running"}
        for i in range(60)
        for app in ("nvidia-driver-daemonset", "nvidia-device-plugin-daemonset")
        if app != "nvidia-device-plugin-daemonset" or i % 2 == 0
    ]
    state = _dark_state(nodes, pods)
    walks: list[int] = []
    every = ClusterFacts.component_pods
    monkeypatch.setattr(ClusterFacts, "component_pods", lambda self: walks.append(1) or every(self))
    assert len(_not_advertising_json(state)) == 60
    assert len(walks) == 1
