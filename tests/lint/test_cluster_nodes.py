"""Lint's node shapes (:mod:`gpuplane.lint.cluster_nodes`) answer every node question exactly as a
walk of every node does, and their cost does not grow with the nodes of a pool (issue 14 item 1:
no rule walks pod sets x nodes).

The per-node oracle is the same code with ``by_node=True`` (each node its own shape), and
:func:`gpuplane.k8s.selectors.pod_matches_required_node_affinity` on every node for the matcher
itself. Costs are counts of work (shapes visited, matcher calls), never a time.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.objects import pod_from_dict
from gpuplane.k8s.selectors import pod_matches_required_node_affinity
from gpuplane.lint import cluster_nodes
from gpuplane.lint.cluster_nodes import ClusterNodes
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import get_rule

# Every lint rule that asks a question of the cluster's nodes per pod set.
NODE_RULES = (
    "gpu-taint-not-tolerated",
    "mig-strategy-mismatch",
    "gpu-selector-matches-no-node",
    "gpu-type-unpinned",
    "efa-not-requested",
    "gpu-rollout-surge-deadlock",
)
HOSTNAME = "kubernetes.io/hostname"
PRODUCT = "nvidia.com/gpu.product"
ZONE = "topology.kubernetes.io/zone"
POOL = "karpenter.sh/nodepool"
INSTANCE = "node.kubernetes.io/instance-type"
STRATEGY = "nvidia.com/mig.strategy"
PRODUCTS = ("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4")
INSTANCES = ("p4d.24xlarge", "p5.48xlarge", "g4dn.xlarge")
ZONES = ("z1", "z2")
POOLS = ("a", "b")
RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb")
TAINTS = (
    ("nvidia.com/gpu", "present", "NoSchedule"),
    ("dedicated", "ml", "NoSchedule"),
    ("spot", "", "NoExecute"),
)
LABEL_KEYS = (PRODUCT, ZONE, POOL, INSTANCE, HOSTNAME)
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")

node_st = st.fixed_dictionaries(
    {
        "product": st.none() | st.sampled_from(PRODUCTS),
        "instance": st.none() | st.sampled_from(INSTANCES),
        "zone": st.sampled_from(ZONES),
        "pool": st.none() | st.sampled_from(POOLS),
        "strategy": st.sampled_from((None, "single", "mixed")),
        "alloc": st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 8), max_size=3),
        "taints": st.lists(st.sampled_from(TAINTS), max_size=2, unique=True),
        "used": st.integers(0, 8),
    }
)


@st.composite
def nodes_st(draw: Any) -> list[dict[str, Any]]:
    """Nodes of one to three pools: each node copies its pool's spec and sometimes changes one
    field (its taints, zone, strategy, resources or GPU usage), so shapes both merge nodes and
    must keep apart nodes that differ in one thing."""
    pools = draw(st.lists(node_st, min_size=1, max_size=3))
    out = []
    for _ in range(draw(st.integers(1, 10))):
        spec = dict(draw(st.sampled_from(pools)))
        field = draw(st.sampled_from((None, None, "taints", "zone", "strategy", "alloc", "used", "product")))
        if field is not None:
            spec[field] = draw(node_st)[field]
        out.append(spec)
    return out


value_st = st.sampled_from((*PRODUCTS, *INSTANCES, *ZONES, *POOLS, "n0", "n1", "other"))
expression_st = st.fixed_dictionaries(
    {
        "key": st.sampled_from(LABEL_KEYS),
        "operator": st.sampled_from(OPERATORS),
        "values": st.lists(value_st, max_size=2),
    }
)
term_st = st.fixed_dictionaries(
    {"matchExpressions": st.lists(expression_st, max_size=2)},
    optional={"matchFields": st.just([{"key": "metadata.name", "operator": "In", "values": ["n1"]}])},
)
pod_st = st.fixed_dictionaries(
    {
        "resources": st.dictionaries(st.sampled_from(RESOURCES), st.integers(1, 9), min_size=1, max_size=2),
        "selector": st.dictionaries(st.sampled_from(LABEL_KEYS), value_st, max_size=2),
        "terms": st.none() | st.lists(term_st, max_size=2),
        "tolerate": st.lists(st.sampled_from(TAINTS), max_size=2, unique=True),
        "replicas": st.integers(1, 4),
        "kind": st.sampled_from(("Deployment", "PyTorchJob")),
    }
)


def node(i: int, spec: dict[str, Any]) -> Manifest:
    labels = {HOSTNAME: f"n{i}", ZONE: spec["zone"], "nvidia.com/gfd.timestamp": str(1700000000 + i)}
    for key, value in ((PRODUCT, spec["product"]), (INSTANCE, spec["instance"]), (POOL, spec["pool"])):
        if value:
            labels[key] = value
    if spec["strategy"]:
        labels[STRATEGY] = spec["strategy"]
    alloc = {"cpu": "32", "memory": "256Gi", "pods": "110", **{k: str(v) for k, v in spec["alloc"].items()}}
    taints = [{"key": k, "value": v, "effect": e} for k, v, e in spec["taints"]]
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": labels},
            "spec": {"taints": taints},
            "status": {"allocatable": alloc, "capacity": alloc},
        }
    )


def bound_pod(i: int, node_name: str, gpus: int) -> Manifest:
    """A running pod holding ``gpus`` nvidia.com/gpu on ``node_name`` (what ``free`` subtracts)."""
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"run{i}", "namespace": "ml"},
            "spec": {
                "nodeName": node_name,
                "containers": [
                    {"name": "m", "image": "img:1", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
                ],
            },
            "status": {"phase": "Running"},
        }
    )


def pod_spec(spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "image": "img:1",
                "resources": {"limits": {k: v for k, v in spec["resources"].items()}},
            }
        ]
    }
    if spec["selector"]:
        out["nodeSelector"] = spec["selector"]
    if spec["tolerate"]:
        out["tolerations"] = [{"key": k, "operator": "Exists", "effect": e} for k, _v, e in spec["tolerate"]]
    if spec["terms"] is not None:
        out["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": spec["terms"]}
            }
        }
    return out


def workload(i: int, spec: dict[str, Any]) -> Manifest:
    template = {"metadata": {"labels": {"app": f"w{i}"}}, "spec": pod_spec(spec)}
    if spec["kind"] == "Deployment":
        body: dict[str, Any] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "spec": {
                "replicas": spec["replicas"],
                "selector": {"matchLabels": {"app": f"w{i}"}},
                "strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                "template": template,
            },
        }
    else:
        body = {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "spec": {
                "pytorchReplicaSpecs": {
                    "Master": {"replicas": 1, "template": template},
                    "Worker": {"replicas": spec["replicas"], "template": template},
                }
            },
        }
    body["metadata"] = {"name": f"w{i}", "namespace": "ml"}
    return Manifest(body)


def cluster_of(nodes: list[dict[str, Any]]) -> ClusterState:
    objects = [node(i, n) for i, n in enumerate(nodes)]
    objects += [bound_pod(i, f"n{i}", n["used"]) for i, n in enumerate(nodes) if n["used"]]
    return ClusterState.from_objects(objects)


def findings(
    objects: list[Manifest], cluster: ClusterState
) -> list[tuple[str, str, str, str, tuple[Any, ...]]]:
    rules = [r for r in (get_rule(rule_id) for rule_id in NODE_RULES) if r is not None]
    result = run_lint(objects, cluster=cluster, config=LintConfig(profile="all"), rules=rules)
    assert not result.failures, result.failures
    return [(f.rule, f.severity, f.object.name, f.message, tuple(f.path)) for f in result.findings]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st(), pods=st.lists(pod_st, min_size=1, max_size=4))
def test_selected_shapes_hold_exactly_the_matching_nodes(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> None:
    cluster = cluster_of(nodes)
    view = ClusterNodes(cluster)
    for spec in pods:
        pod = pod_from_dict({"metadata": {"name": "p"}, "spec": pod_spec(spec)})
        shapes, chosen = view.selected(pod)
        got = sorted(i for s in chosen for i in shapes.members[s])
        assert got == [j for j, n in enumerate(cluster.nodes) if pod_matches_required_node_affinity(pod, n)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=nodes_st(), pods=st.lists(pod_st, min_size=1, max_size=5))
def test_rules_per_shape_equal_rules_per_node(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> None:
    cluster = cluster_of(nodes)
    objects = [workload(i, p) for i, p in enumerate(pods)]
    per_shape = findings(objects, cluster)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cluster_nodes, "ClusterNodes", functools.partial(ClusterNodes, by_node=True))
        per_node = findings(objects, cluster)
    assert per_shape == per_node


def pool_cluster(per_pool: int) -> ClusterState:
    """Three pools of ``per_pool`` nodes each, equal but for their names, hostnames and a per-node
    GFD timestamp (no selector reads it)."""
    specs = [
        {
            "product": p,
            "instance": t,
            "zone": "z1",
            "pool": None,
            "strategy": s,
            "alloc": a,
            "taints": [TAINTS[0]],
            "used": 0,
        }
        for p, t, s, a in (
            (PRODUCTS[0], INSTANCES[0], "mixed", {"nvidia.com/mig-1g.10gb": 7}),
            (PRODUCTS[1], INSTANCES[1], None, {"nvidia.com/gpu": 8}),
            (PRODUCTS[2], INSTANCES[2], None, {"nvidia.com/gpu": 1}),
        )
    ]
    return cluster_of([spec for spec in specs for _ in range(per_pool)])


def many_workloads() -> list[Manifest]:
    """Forty GPU workloads with distinct tolerations, selectors and asks: every node rule has
    questions to ask (and findings to give) on :func:`pool_cluster`."""
    out = []
    for i in range(40):
        spec: dict[str, Any] = {
            "resources": {RESOURCES[i % 3]: 1 + i % 2},
            "selector": {PRODUCT: PRODUCTS[i % 3]} if i % 4 else {},
            "terms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": [f"z{i % 5}"]}]}],
            "tolerate": [TAINTS[i % 3]],
            "replicas": 1 + i % 3,
            "kind": "PyTorchJob" if i % 5 == 0 else "Deployment",
        }
        if i % 8 == 1:  # a job larger than one H100 node, over EFA instances
            spec.update(resources={"nvidia.com/gpu": 8}, selector={PRODUCT: PRODUCTS[1]}, terms=None)
            spec.update(kind="PyTorchJob", replicas=3)
        if i % 10 == 3:  # required GPU terms no node satisfies
            spec["terms"] = [{"matchExpressions": [{"key": PRODUCT, "operator": "In", "values": ["B200"]}]}]
            spec["selector"] = {}
        out.append(workload(i, spec))
    return out


def matcher_calls(objects: list[Manifest], cluster: ClusterState) -> dict[str, int]:
    """How often the node matchers and the taint test run while the node rules lint ``objects``."""
    watched = {
        "pod_matches_required_node_affinity",
        "node_selector_term_matches_labels",
        "tolerations_tolerate_taint",
    }
    calls = dict.fromkeys(watched, 0)

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_name in watched:
            calls[frame.f_code.co_name] += 1

    sys.setprofile(profile)
    try:
        findings(objects, cluster)
    finally:
        sys.setprofile(None)
    return calls


def test_node_questions_cost_the_shapes_not_the_nodes() -> None:
    """Twelve times the nodes of the same three pools: the same matcher and taint calls, the same
    shape visits. A walk of the nodes per pod set would grow them twelvefold."""
    objects = many_workloads()
    small, large = pool_cluster(5), pool_cluster(60)
    assert {f[0] for f in findings(objects, large)} == set(NODE_RULES)
    calls = matcher_calls(objects, small)
    assert calls == matcher_calls(objects, large)
    assert calls == {
        "pod_matches_required_node_affinity": 141,
        "node_selector_term_matches_labels": 82,
        "tolerations_tolerate_taint": 5,
    }
    templates = [
        obj.data["spec"]["template"]
        if obj.kind == "Deployment"
        else obj.data["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
        for obj in objects
    ]
    visited = []
    for cluster in (small, large):
        view = ClusterNodes(cluster)
        for template in templates:
            view.selected(pod_from_dict(template))
        visited.append(view.visited)
    # 21 distinct node selections, each matched against the 3 shapes of the labels it reads
    assert visited == [63, 63]
