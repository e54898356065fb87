"""Helpers shared by the rule modules of this package (split from ``autoscaling.py``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint.rules._common import as_str
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


KARPENTER_GROUP = "karpenter.sh"

# Requirement keys that select GPU instances when used with In / Exists / Gt / Gte
# (Karpenter AWS and Azure well-known labels, platform.md §3.1 and §3.5).
GPU_REQUIREMENT_KEYS = frozenset(
    {
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-gpu-memory",
        "karpenter.azure.com/sku-gpu-name",
        "karpenter.azure.com/sku-gpu-manufacturer",
        "karpenter.azure.com/sku-gpu-count",
    }
)
# EC2 instance categories / families / types with NVIDIA GPUs (g*, p*; AWS instance-types reference).
GPU_CATEGORIES = frozenset({"g", "p"})
_GPU_FAMILY = LazyPattern(r"^(g\d+[a-z]*|gr\d+[a-z]*|p\d+[a-z]*|p\d+-[a-z0-9]+)$")
_AZURE_GPU_SKU = LazyPattern(r"^standard_n[cdv]", re.IGNORECASE)


def _requirements(pool: Manifest) -> list[tuple[int, dict[str, Any]]]:
    reqs = pool.get("spec", "template", "spec", "requirements")
    return [(i, r) for i, r in enumerate(reqs) if isinstance(r, dict)] if isinstance(reqs, list) else []


def _values(req: dict[str, Any]) -> list[str]:
    vals = req.get("values")
    return [str(v) for v in vals] if isinstance(vals, list) else []


def _gpu_requirement(pool: Manifest) -> int | None:
    """Index of the requirement that lets the NodePool launch GPU instances, else None."""
    for i, req in _requirements(pool):
        key, op, vals = as_str(req.get("key")), as_str(req.get("operator")), _values(req)
        if key in GPU_REQUIREMENT_KEYS:
            if op in ("In", "Exists"):
                return i
            if (
                op in ("Gt", "Gte")
                and vals
                and vals[0].isdigit()
                and (int(vals[0]) >= 0 if op == "Gt" else int(vals[0]) >= 1)
            ):
                return i
            continue
        if op != "In":
            continue
        if key == "karpenter.k8s.aws/instance-category" and GPU_CATEGORIES & {v.lower() for v in vals}:
            return i
        if key == "karpenter.k8s.aws/instance-family" and any(_GPU_FAMILY.match(v.lower()) for v in vals):
            return i
        if key == "node.kubernetes.io/instance-type" and any(
            _GPU_FAMILY.match(v.lower().split(".", 1)[0]) or _AZURE_GPU_SKU.match(v) for v in vals
        ):
            return i
        if key in ("karpenter.azure.com/sku-family", "karpenter.azure.com/sku-name") and any(
            v.upper().startswith("N") or _AZURE_GPU_SKU.match(v) for v in vals
        ):
            return i
    return None


def _gpu_pools(ctx: LintContext) -> list[tuple[Manifest, int]]:
    out = []
    for pool in ctx.by_kind("NodePool", KARPENTER_GROUP):
        idx = _gpu_requirement(pool)
        if idx is not None:
            out.append((pool, idx))
    return out
