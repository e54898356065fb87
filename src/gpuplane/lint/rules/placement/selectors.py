"""Node selectors and affinity: GPU selectors no node matches, GPU types left open, CPU pods
that may land on GPU nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuplane.gpu.labels import GPU_PRODUCT, SHARED_PRODUCT_SUFFIX, product_model, product_selector_values
from gpuplane.gpu.nodes import GPU_NODE_LABELS, is_gpu_node
from gpuplane.k8s.selectors import node_selection_key, node_selector_term_matches_labels
from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import (
    GPU_LABELS,
    TYPE_PINNING_LABELS,
    ZONE_LABELS,
    as_str,
    node_selector,
    preferred_terms,
    required_terms,
    term_expressions,
    tolerations,
    where,
)
from gpuplane.ruleset import rule

GPU_TAINT_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")

_KARPENTER = ("karpenter.k8s.aws/", "karpenter.sh/", "karpenter.azure.com/")


@rule(
    id="gpu-selector-matches-no-node",
    severity="error",
    category="placement",
    summary="nodeSelector / required node affinity on GPU labels that no node satisfies",
    context="required",
)
def gpu_selector_matches_no_node(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return
    has_nodepools = bool(ctx.by_kind("NodePool", include_cluster=True))
    import msgspec  # for start-up time: only cluster-context linting needs it

    # Built once, so each pod set costs what its selector costs, not a walk of every node:
    # label key -> the values nodes carry; required GPU terms (encoded) -> does some node shape
    # (the nodes alike in the labels the terms read: lint.cluster_nodes) match.
    label_values: dict[str, set[str]] = {}
    for node in cluster.nodes:
        for key, value in (node.metadata.labels or {}).items():
            label_values.setdefault(key, set()).add(value)
    terms_match: dict[bytes, bool] = {}
    for ps in ctx.podsets:
        # typed pod: nodeSelector values that are not strings are rejected by the API (pod-template-invalid)
        spec = ps.pod().spec
        gpu_sel = {
            k: v
            for k, v in spec.node_selector.items()
            if k in GPU_LABELS and not (has_nodepools and k.startswith(_KARPENTER))
        }
        holder = ctx.holder(ps)
        for key, value in gpu_sel.items():
            if value not in label_values.get(key, ()):
                seen = sorted(label_values.get(key, ()))
                hint = f"nodes have {key} in {seen[:5]}" if seen else f"no node has the label {key}"
                fix = f"use a value nodes carry ({', '.join(seen[:3]) or 'check the GPU node labels'})"
                if key == GPU_PRODUCT and value + SHARED_PRODUCT_SUFFIX in seen:
                    fix = f"use {key}: {value}{SHARED_PRODUCT_SUFFIX}, the label the shared nodes carry"
                    hint += f"; GPU Feature Discovery names shared (time-sliced) GPUs {value}{SHARED_PRODUCT_SUFFIX}"
                yield ctx.report(
                    holder,
                    (*ps.spec_path, "nodeSelector", key),
                    f"{where(ps)} selects {key}={value} but no node matches ({hint}): Pending "
                    "(\"didn't match Pod's node affinity/selector\")",
                    fix,
                )
        node_affinity = spec.affinity.node_affinity if spec.affinity is not None else None
        required = (
            node_affinity.required_during_scheduling_ignored_during_execution
            if node_affinity is not None
            else None
        )
        terms = required.node_selector_terms if required is not None else []
        gpu_terms = [
            t
            for t in terms
            if any(
                e.key in GPU_LABELS and not (has_nodepools and e.key.startswith(_KARPENTER))
                for e in t.match_expressions
            )
        ]
        if not gpu_terms or len(gpu_terms) != len(terms):
            continue
        terms_key = msgspec.json.encode(gpu_terms)
        if terms_key not in terms_match:
            view = ctx.cluster_nodes()
            shapes = view.shapes(
                {e.key for t in gpu_terms for e in t.match_expressions},
                name=any(t.match_fields for t in gpu_terms),
            )
            terms_match[terms_key] = any(
                node_selector_term_matches_labels(t, rep.metadata.labels, rep.metadata.name)
                for t in gpu_terms
                for rep in view.reps(shapes)
            )
        if not terms_match[terms_key]:
            yield ctx.report(
                holder,
                (*ps.spec_path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
                f"{where(ps)} requires GPU node labels that no node carries: Pending "
                "(\"didn't match Pod's node affinity/selector\")",
                "check the label values against `kubectl get nodes --show-labels`",
            )


_MODEL_LABELS = (
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
    "amd.com/gpu.product-name",
)
# What gpu-type-unpinned reads of a node besides its node selection: is_gpu_node's labels, the model.
_MODEL_READS = frozenset((*GPU_NODE_LABELS, *_MODEL_LABELS, GPU_PRODUCT))


def _gpu_model(labels: dict[str, str]) -> str | None:
    for key in _MODEL_LABELS:
        if labels.get(key):
            return product_model(labels[key])
    return None


def _pins_type(ps: Any) -> bool:
    if pod_spec(ps).get("nodeName"):
        return True
    if any(k in TYPE_PINNING_LABELS for k in node_selector(ps)):
        return True
    return any(
        e.get("key") in TYPE_PINNING_LABELS
        for t in (*required_terms(ps), *preferred_terms(ps))
        for e in term_expressions(t)
    )


@rule(
    id="gpu-type-unpinned",
    severity="info",
    category="placement",
    summary="the cluster has several GPU models and the GPU pod pins none",
    context="required",
    tier="opt-in",
)
def gpu_type_unpinned(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None:
        return
    view = ctx.cluster_nodes()
    everywhere = view.shapes(_MODEL_READS)
    if (
        len(
            {
                m
                for rep in view.reps(everywhere)
                if is_gpu_node(rep) and (m := _gpu_model(rep.metadata.labels))
            }
        )
        < 2
    ):
        return
    # per distinct node selection: the GPU models and product labels of the GPU node shapes it selects
    offered: dict[bytes, tuple[list[str], set[str]]] = {}
    for ps in ctx.gpu_podsets():
        if _pins_type(ps):
            continue
        # Pinned in effect when every node the pod may be placed on (nodeSelector and required
        # node affinity, e.g. a Karpenter NodePool label) has the same GPU model.
        pod = ps.pod()
        key = node_selection_key(pod)
        if key not in offered:
            shapes, selected = view.selected(pod, reads=_MODEL_READS)
            labelled = [
                (rep, m)
                for s in selected
                if is_gpu_node(rep := view.nodes[shapes.reps[s]]) and (m := _gpu_model(rep.metadata.labels))
            ]
            # The selector values are the product labels the nodes carry, which differ from the
            # model on shared nodes (gpu.labels.SHARED_PRODUCT_SUFFIX): advice
            # gpu-selector-matches-no-node would otherwise flag.
            offered[key] = (
                sorted({m for _rep, m in labelled}),
                {(rep.metadata.labels or {}).get(GPU_PRODUCT, "") for rep, _m in labelled},
            )
        models, products = offered[key]
        if len(models) < 2:
            continue
        shown = ", ".join(models[:4]) + (", ..." if len(models) > 4 else "")
        values = [v for m in models for v in (product_selector_values(products, m) or [m])]
        choices = ", ".join(values[:4]) + (", ..." if len(values) > 4 else "")
        yield ctx.report(
            ctx.holder(ps),
            ps.spec_path,
            f"{where(ps)} does not choose among the cluster's GPU models ({shown})",
            f"add nodeSelector: {{nvidia.com/gpu.product: <one of {choices}>}} (or a preferred affinity)",
        )


_TOPOLOGY_KEYS = {
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    *ZONE_LABELS,
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/region",
}


def _kept_off(ps: Any) -> bool:
    if pod_spec(ps).get("nodeName"):
        return True
    if any(k not in _TOPOLOGY_KEYS for k in node_selector(ps)):
        return True  # pinned to a specific pool
    for term in required_terms(ps):
        for e in term_expressions(term):
            key = as_str(e.get("key"))
            if key in GPU_LABELS and e.get("operator") in ("DoesNotExist", "NotIn"):
                return True
            if key not in _TOPOLOGY_KEYS and e.get("operator") in ("In", "Exists") and key not in GPU_LABELS:
                return True
    return False


@rule(
    id="cpu-pod-on-gpu-nodes",
    severity="warning",
    category="placement",
    summary="pod without GPU request tolerates GPU taints (or everything) and is not kept off GPU nodes",
)
def cpu_pod_on_gpu_nodes(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        if ctx.is_gpu(ps) or kinds.is_daemon(ps):
            continue
        tols = tolerations(ps)
        if not tols:
            continue
        hit = None
        for i, t in enumerate(tols):
            if not isinstance(t.get("key", ""), str):
                continue  # the API rejects a toleration key that is not a string (pod-template-invalid)
            key = t.get("key") or ""
            if (not key and t.get("operator") == "Exists") or key in GPU_TAINT_KEYS:
                hit = i
                break
        if hit is None or _kept_off(ps):
            continue
        tol = tols[hit]
        what = (
            "every taint (operator: Exists with no key)" if not tol.get("key") else f"the {tol['key']} taint"
        )
        yield ctx.report(
            ctx.holder(ps),
            (*ps.spec_path, "tolerations", hit),
            f"{where(ps)} requests no GPU but tolerates {what}: it can take CPU and memory on GPU nodes",
            "remove the toleration, or add required node affinity {key: nvidia.com/gpu.present, operator: DoesNotExist}",
        )
