"""Small helpers shared by the rule modules.

Rules read manifests as plain dicts (exact paths and lines for findings), and a manifest
can hold any YAML type at any field. The typed accessors here (:func:`as_dict`,
:func:`as_list`, :func:`as_str`, :func:`dict_items`) are the one place rules turn a raw
field into the type they expect, so a wrongly typed field is skipped instead of crashing
the rule (which would drop every finding of that rule for the whole input). The API
server rejects such fields; rule ``pod-template-invalid`` reports them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# IsExtendedResourceName has one implementation (k8s/validation.py); rules import it from here.
from gpuplane.k8s import fields
from gpuplane.k8s.fields import as_dict as as_dict
from gpuplane.k8s.fields import as_int as as_int
from gpuplane.k8s.fields import as_list as as_list
from gpuplane.k8s.validation import is_extended_resource as is_extended_resource
from gpuplane.lint.context import object_label, pod_spec

# Node labels that name a GPU model or GPU pool (GFD, clouds, Karpenter, AMD, Intel);
# sources: reference/nvidia-gpu-stack.md §2, §7, §8 and platform.md §3.1.
GPU_MODEL_LABELS = (
    "nvidia.com/gpu.product",
    "nvidia.com/gpu.family",
    "nvidia.com/gpu.machine",
    "nvidia.com/gpu.memory",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "amd.com/gpu.product-name",
    "amd.com/gpu.family",
    "gpu.intel.com/product",
    "gpu.intel.com/family",
)
GPU_PRESENCE_LABELS = (
    "nvidia.com/gpu.present",
    "nvidia.com/gpu.count",
    "feature.node.kubernetes.io/pci-10de.present",
)
GPU_LABELS = GPU_MODEL_LABELS + GPU_PRESENCE_LABELS
# Labels that pin a node type as precisely as a GPU model label does.
TYPE_PINNING_LABELS = (
    *GPU_MODEL_LABELS,
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family",
    "cloud.google.com/machine-family",
)

ZONE_LABELS = (
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.gke.io/zone",
)


def as_str(value: Any, default: str = "") -> str:
    """:func:`gpuplane.k8s.fields.as_str` with the rules' default, the empty string: safe to hash,
    compare and call string methods on (a list or a map where a name belongs is not a name)."""
    return fields.as_str(value, default)


def dict_items(value: Any) -> list[tuple[int, dict[Any, Any]]]:
    """``(index, item)`` for the mapping items of a list field; other items and a field that
    is not a list yield nothing. Indexes are the real ones, so finding paths stay exact."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def container_resource_items(c: Any, kind: str) -> Iterator[tuple[str, Any]]:
    block = c.resources(kind)
    for name, value in block.items():
        if isinstance(name, str):
            yield name, value


def node_selector(ps: Any) -> dict[str, Any]:
    sel = pod_spec(ps).get("nodeSelector")
    return sel if isinstance(sel, dict) else {}


def required_terms(ps: Any) -> list[dict[str, Any]]:
    """``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`` (ORed terms)."""
    aff = pod_spec(ps).get("affinity")
    node = aff.get("nodeAffinity") if isinstance(aff, dict) else None
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, dict) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, dict) else None
    return [t for t in terms if isinstance(t, dict)] if isinstance(terms, list) else []


def preferred_terms(ps: Any) -> list[dict[str, Any]]:
    aff = pod_spec(ps).get("affinity")
    node = aff.get("nodeAffinity") if isinstance(aff, dict) else None
    pref = node.get("preferredDuringSchedulingIgnoredDuringExecution") if isinstance(node, dict) else None
    out = []
    for item in pref if isinstance(pref, list) else ():
        if isinstance(item, dict) and isinstance(item.get("preference"), dict):
            out.append(item["preference"])
    return out


def term_expressions(term: dict[str, Any]) -> list[dict[str, Any]]:
    exprs = term.get("matchExpressions")
    return [e for e in exprs if isinstance(e, dict)] if isinstance(exprs, list) else []


def targeted_node_label_keys(ps: Any) -> set[str]:
    """Node label keys the pod requires: its nodeSelector keys and the keys of its required node
    affinity expressions (the labels that decide where it may run)."""
    keys = {k for k in node_selector(ps) if isinstance(k, str)}
    for term in required_terms(ps):
        keys.update(e["key"] for e in term_expressions(term) if isinstance(e.get("key"), str))
    return keys


# Node labels only GKE sets (GKE docs "About GPUs in GKE", "Compute classes"): a pod that requires
# one runs on GKE, whose API server adds the GPU toleration itself (ExtendedResourceToleration).
GKE_NODE_LABEL_PREFIXES = ("cloud.google.com/gke-", "cloud.google.com/compute-class")


def targets_gke(ps: Any) -> bool:
    """The pod requires GKE nodes (``cloud.google.com/gke-accelerator``, ``gke-nodepool``, ...)."""
    return any(key.startswith(GKE_NODE_LABEL_PREFIXES) for key in targeted_node_label_keys(ps))


def tolerations(ps: Any) -> list[dict[str, Any]]:
    tols = pod_spec(ps).get("tolerations")
    return [t for t in tols if isinstance(t, dict)] if isinstance(tols, list) else []


obj_label = object_label  # the one naming helper (lint.context), under the name the rules import


def where(ps: Any, container: Any | None = None) -> str:
    """``Deployment team-a/serve, container "vllm"`` (plus the replica role when it has one)."""
    text = obj_label(ps.source)
    if ps.role and ps.name and ps.name not in ("pod", "main", "", ps.source.name):
        text += f" ({ps.name})"
    if container is not None:
        kind = "init container" if container.section == "initContainers" else "container"
        text += f', {kind} "{container.name}"'
    return text
