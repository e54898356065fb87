"""The cluster-context rules that answer per distinct node selection (issue 14 item 1) give the
same findings as the naive computation on random clusters.

``mig-strategy-mismatch`` caches its verdict per (node selection, resource name),
``gpu-taint-not-tolerated`` per (node selection, GPU resources, tolerations) and
``gpu-selector-matches-no-node`` reads an index of node label values and caches required GPU
terms, so a cluster's workloads cost what their distinct selectors cost, not pods x nodes. The
naive computation is each pod set linted alone (nothing shared between pod sets): the findings
of all pod sets linted together must be exactly the union of those.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.manifest import Manifest
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import get_rule

RULES = ("mig-strategy-mismatch", "gpu-selector-matches-no-node", "gpu-taint-not-tolerated")
TAINT_KEYS = ("nvidia.com/gpu", "dedicated")
PRODUCTS = ("NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "Tesla-T4")
ZONES = ("z1", "z2")
RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb")

node_st = st.fixed_dictionaries(
    {
        "product": st.sampled_from(PRODUCTS),
        "zone": st.sampled_from(ZONES),
        "strategy": st.sampled_from((None, "single", "mixed")),
        "alloc": st.dictionaries(st.sampled_from(RESOURCES), st.integers(0, 4), max_size=3),
        "taint": st.none() | st.sampled_from(TAINT_KEYS),
    }
)
pod_st = st.fixed_dictionaries(
    {
        "resource": st.sampled_from(RESOURCES),
        "selector": st.dictionaries(
            st.sampled_from(("nvidia.com/gpu.product", "topology.kubernetes.io/zone")),
            st.sampled_from((*PRODUCTS, *ZONES, "other")),
            max_size=2,
        ),
        "affinity_products": st.none()
        | st.lists(st.sampled_from((*PRODUCTS, "B200")), min_size=1, max_size=2),
        "tolerate": st.lists(st.sampled_from(TAINT_KEYS), max_size=2),
    }
)


def node(i: int, spec: dict[str, Any]) -> Manifest:
    labels = {
        "kubernetes.io/hostname": f"n{i}",
        "nvidia.com/gpu.product": spec["product"],
        "topology.kubernetes.io/zone": spec["zone"],
    }
    if spec["strategy"]:
        labels["nvidia.com/mig.strategy"] = spec["strategy"]
    alloc = {"cpu": "32", "memory": "256Gi", "pods": "110", **{k: str(v) for k, v in spec["alloc"].items()}}
    taints = [{"key": spec["taint"], "value": "true", "effect": "NoSchedule"}] if spec["taint"] else []
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}", "labels": labels},
            "spec": {"taints": taints},
            "status": {"allocatable": alloc, "capacity": alloc},
        }
    )


def pod(i: int, spec: dict[str, Any]) -> Manifest:
    pod_spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "img:1", "resources": {"limits": {spec["resource"]: 1}}}]
    }
    if spec["selector"]:
        pod_spec["nodeSelector"] = spec["selector"]
    if spec["tolerate"]:
        pod_spec["tolerations"] = [
            {"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in spec["tolerate"]
        ]
    if spec["affinity_products"]:
        expr = {"key": "nvidia.com/gpu.product", "operator": "In", "values": spec["affinity_products"]}
        pod_spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [expr]}]
                }
            }
        }
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "ml"},
            "spec": pod_spec,
        }
    )


def findings(objects: list[Manifest], cluster: ClusterState) -> list[tuple[str, str, str]]:
    rules = [get_rule(r) for r in RULES]
    result = run_lint(
        objects, cluster=cluster, config=LintConfig(), rules=[r for r in rules if r is not None]
    )
    return sorted((f.rule, str(f.object.data["metadata"]["name"]), f.message) for f in result.findings)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.lists(node_st, min_size=1, max_size=8), pods=st.lists(pod_st, min_size=1, max_size=8))
def test_shared_answers_equal_each_pod_set_alone(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]]
) -> None:
    cluster = ClusterState.from_objects([node(i, n) for i, n in enumerate(nodes)])
    objects = [pod(i, p) for i, p in enumerate(pods)]
    together = findings(objects, cluster)
    alone = sorted(f for obj in objects for f in findings([obj], cluster))
    assert together == alone
