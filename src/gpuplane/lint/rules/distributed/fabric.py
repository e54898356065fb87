"""Multi-node NCCL training on instance types with a fabric it does not request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import node_selector, required_terms, term_expressions, where
from gpuplane.ruleset import rule

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
EFA_RESOURCE = "vpc.amazonaws.com/efa"


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _selected_types(ps: PodSet) -> set[str] | None:
    """Instance types the pod names itself (nodeSelector, or every required term's In list)."""
    sel = node_selector(ps)
    for key in INSTANCE_TYPE_KEYS:
        if isinstance(sel.get(key), str):
            return {sel[key]}
    found: set[str] = set()
    terms = required_terms(ps)
    for term in terms:
        values = [
            v
            for e in term_expressions(term)
            if e.get("key") in INSTANCE_TYPE_KEYS and e.get("operator") == "In"
            for v in _strings(e.get("values"))
        ]
        if not values:
            return None  # a term without an instance-type restriction: any type
        found.update(values)
    return found or None


def _nodepool_types(ctx: LintContext, ps: PodSet) -> set[str] | None:
    """Instance types of the Karpenter NodePools whose template labels satisfy the pod's nodeSelector."""
    sel = {k: v for k, v in node_selector(ps).items() if isinstance(v, str)}
    if not sel:
        return None
    found: set[str] = set()
    for pool in ctx.by_kind("NodePool", "karpenter.sh", include_cluster=True):
        labels = pool.get("spec", "template", "metadata", "labels")
        if not isinstance(labels, dict) or any(labels.get(k) != v for k, v in sel.items()):
            continue
        reqs = pool.get("spec", "template", "spec", "requirements")
        types = [
            v
            for r in (reqs if isinstance(reqs, list) else [])
            if isinstance(r, dict) and r.get("key") in INSTANCE_TYPE_KEYS and r.get("operator") == "In"
            for v in _strings(r.get("values"))
        ]
        if not types:
            return None  # a matching pool that may launch any type
        found.update(types)
    return found or None


def _node_types(ctx: LintContext, ps: PodSet, memo: dict[Any, set[str] | None]) -> set[str] | None:
    """Instance types of the cluster's nodes that carry the pod's nodeSelector labels (``memo``:
    once per distinct selector, over the node shapes alike in those labels and the instance type:
    lint.cluster_nodes)."""
    cluster = ctx.cluster
    sel = {k: v for k, v in node_selector(ps).items() if isinstance(v, str)}
    if cluster is None or not sel:
        return None
    key = tuple(sorted(sel.items()))
    if key not in memo:
        view = ctx.cluster_nodes()
        memo[key] = _types_of_nodes(view.reps(view.shapes((*sel, *INSTANCE_TYPE_KEYS))), sel)
    return memo[key]


def _types_of_nodes(nodes: list[Any], sel: dict[str, str]) -> set[str] | None:
    found: set[str] = set()
    for node in nodes:
        labels: dict[str, Any] = node.metadata.labels or {}
        if all(labels.get(k) == v for k, v in sel.items()):
            t = next((labels[k] for k in INSTANCE_TYPE_KEYS if k in labels), None)
            if t is None:
                return None
            found.add(t)
    return found or None


@rule(
    id="efa-not-requested",
    severity="warning",
    category="distributed",
    summary="Multi-node GPU training on EFA instance types without vpc.amazonaws.com/efa: NCCL falls back to TCP.",
)
def efa_not_requested(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
    node_types: dict[Any, set[str] | None] = {}
    # The GPU pod sets of each workload, gathered once (not a walk of every pod set per workload).
    by_source: dict[int, list[PodSet]] = {}
    for p in ctx.gpu_podsets():
        by_source.setdefault(id(p.source), []).append(p)
    for ps in ctx.gpu_podsets():
        src = ps.source
        if id(src) in seen or not ps.distributed:
            continue
        types = _selected_types(ps) or _nodepool_types(ctx, ps) or _node_types(ctx, ps, node_types)
        if not types:
            continue
        # deferred for start-up time: only a distributed job on known instance types needs them
        from gpuplane.gpu.catalog import catalog
        from gpuplane.gpu.fabric import instance_fabric

        fabrics = [instance_fabric(t) for t in sorted(types)]
        if any(f is None or f.fabric != "efa" for f in fabrics):
            continue
        gpus_per_node = {it.gpu_count for t in types if (it := catalog().instance(t)) is not None}
        members = by_source[id(src)]
        job_gpus = sum(
            sum(ctx.gpu_requests(p).values()) * (p.resume_count if p.suspended else p.count) for p in members
        )
        if not gpus_per_node or job_gpus <= max(gpus_per_node):
            continue  # fits one node: NCCL stays on NVLink / PCIe
        seen.add(id(src))
        requested = any(
            EFA_RESOURCE in (c.resources("limits") or {}) or EFA_RESOURCE in (c.resources("requests") or {})
            for p in members
            for c in ctx.containers(p)
        )
        if requested:
            continue
        counts = ", ".join(f"{f.instance_type}: {f.interfaces}" for f in fabrics if f is not None)
        yield ctx.report(
            ctx.holder(ps),
            (*ps.spec_path, "containers"),
            f"{where(ps)} spreads the job's {job_gpus} GPUs over several {', '.join(sorted(types))} nodes "
            f"but requests no {EFA_RESOURCE} ({counts} interfaces per node): without the EFA device NCCL "
            "runs its all-reduce over TCP sockets at a fraction of the fabric's bandwidth.",
            f"Request {EFA_RESOURCE} in each rank's limits (its GPU share of the node's interfaces), install the "
            "aws-efa-k8s-device-plugin, and use an image with libfabric and aws-ofi-nccl (FI_PROVIDER=efa).",
        )
