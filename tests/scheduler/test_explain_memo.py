"""The per-node facts why-pending's causes remember across Pending pods (issue 14: GPU model
and sharing per node and resource, the GPU names a node advertises by kind, the MIG-single
nodes) give every pod the causes it gets when explained alone, in any order, on random GPU
clusters: MIG mixed and single strategies, time-slicing with and without the rename, plain GPUs,
CPU-only nodes; pods asking whole GPUs, MIG slices and shared replicas."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import node, pod, scheduler

from gpuplane.why_pending.explain import explain

MIG = "nvidia.com/mig-1g.10gb"
SHARED = "nvidia.com/gpu.shared"
node_st = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(("gpu", "mig-mixed", "mig-single", "sliced", "renamed", "cpu")),
        "count": st.integers(1, 8),
        "used": st.integers(0, 8),
    }
)
pending_st = st.fixed_dictionaries(
    {"resource": st.sampled_from(("nvidia.com/gpu", MIG, SHARED)), "count": st.integers(1, 4)}
)


def build(nodes: list[dict[str, Any]], pending: list[dict[str, Any]]) -> list[dict]:
    docs: list[dict] = []
    for i, n in enumerate(nodes):
        labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
        extra: dict[str, str] = {}
        resource = "nvidia.com/gpu"
        if n["kind"] == "mig-mixed":
            labels["nvidia.com/mig.strategy"] = "mixed"
            resource = MIG
        elif n["kind"] == "mig-single":
            labels["nvidia.com/mig.strategy"] = "single"
        elif n["kind"] == "sliced":
            labels.update({"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4"})
        elif n["kind"] == "renamed":
            labels.update({"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4"})
            resource = SHARED
        if n["kind"] != "cpu":
            extra[resource] = str(n["count"])
        else:
            labels = {}
        docs.append(node(f"n{i}", labels=labels, extra=extra))
        used = min(n["used"], n["count"])
        if n["kind"] != "cpu" and used:
            docs.append(pod(f"run{i}", node_name=f"n{i}", resources={resource: str(used)}))
    for k, p in enumerate(pending):
        docs.append(pod(f"p{k}", resources={p["resource"]: str(p["count"])}))
    return docs


def causes_of(docs: list[dict], order: list[int] | None = None) -> dict[str, tuple[list[str], list[str]]]:
    sched = scheduler(docs)
    pods = sorted(sched.cluster.pending_pods, key=lambda p: p.metadata.name)
    if order is not None:
        pods = [pods[i % len(pods)] for i in order] + pods
    out: dict[str, tuple[list[str], list[str]]] = {}
    for p in pods:
        expl = explain(sched, p)
        out.setdefault(p.metadata.name, (expl.cause_texts(), expl.fixes))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(node_st, min_size=1, max_size=6),
    st.lists(pending_st, min_size=1, max_size=4),
    st.lists(st.integers(0, 3), max_size=4),
)
def test_remembered_node_facts_do_not_change_any_pods_causes(
    nodes: list[dict[str, Any]], pending: list[dict[str, Any]], order: list[int]
) -> None:
    docs = build(nodes, pending)
    together = causes_of(docs, order)
    for k in range(len(pending)):
        alone = [
            d for d in docs if not d["metadata"]["name"].startswith("p") or d["metadata"]["name"] == f"p{k}"
        ]
        assert causes_of(alone)[f"p{k}"] == together[f"p{k}"]
