"""Small helpers shared by the gpu, placement and tenancy rule modules."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.sources.manifest import FieldPath

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
TYPE_PINNING_LABELS = (*GPU_MODEL_LABELS, "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
                       "karpenter.k8s.aws/instance-family", "cloud.google.com/machine-family")

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone", "topology.gke.io/zone")


def is_extended_resource(name: str) -> bool:
    """An extended resource name (k8s pkg/apis/core/v1/helper IsExtendedResourceName):
    qualified with a domain that is not kubernetes.io, and not a ``requests.`` quota key."""
    if "/" not in name or name.startswith(("requests.", "limits.")):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


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


def requirement_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    """One NodeSelectorRequirement against node labels (k8s.io/component-helpers
    scheduling/corev1/nodeaffinity: In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key = expr.get("key")
    op = expr.get("operator")
    values = [str(v) for v in expr.get("values") or ()]
    present = key in labels
    value = labels.get(key)
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(values) == 1:
        try:
            left, right = int(value or ""), int(values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def tolerations(ps: Any) -> list[dict[str, Any]]:
    tols = pod_spec(ps).get("tolerations")
    return [t for t in tols if isinstance(t, dict)] if isinstance(tols, list) else []


def tolerates(tol: dict[str, Any], key: str, value: str | None, effect: str) -> bool:
    """k8s.io/api core/v1 Toleration.ToleratesTaint: empty effect matches all effects;
    empty key with Exists matches every taint; Exists ignores the value; Equal (default) compares it."""
    t_effect = tol.get("effect") or ""
    if t_effect and t_effect != effect:
        return False
    t_key = tol.get("key") or ""
    op = tol.get("operator") or "Equal"
    if not t_key:
        return op == "Exists"
    if t_key != key:
        return False
    if op == "Exists":
        return True
    return op == "Equal" and str(tol.get("value") or "") == str(value or "")


def tolerated(tols: list[dict[str, Any]], key: str, value: str | None, effect: str) -> bool:
    return any(tolerates(t, key, value, effect) for t in tols)


def spec_field(ctx: LintContext, ps: Any, *rest: str | int) -> FieldPath:
    return (*ps.spec_path, *rest)


def obj_label(obj: Any) -> str:
    """``Kind namespace/name`` for messages."""
    ns = f"{obj.namespace}/" if obj.namespace else ""
    return f"{obj.kind} {ns}{obj.name}"


def where(ps: Any, container: Any | None = None) -> str:
    """``Deployment team-a/serve, container "vllm"`` (plus the replica role when it has one)."""
    text = obj_label(ps.source)
    if ps.role and ps.name and ps.name not in ("pod", "main", "", ps.source.name):
        text += f" ({ps.name})"
    if container is not None:
        kind = "init container" if container.section == "initContainers" else "container"
        text += f', {kind} "{container.name}"'
    return text
