"""Namespaces, PriorityClasses, ResourceQuotas and LimitRanges per tenant.

- GPU quota keys use the ``requests.`` prefix: the only form the quota evaluator charges for
  an extended resource (``pkg/quota/v1/evaluator/core/pods.go``; reference platform.md §1.1).
- PriorityClass values stay <= 1e9 and avoid the ``system-`` prefix (§1.5); a
  PriorityClass-scoped quota with ``pods: 0`` stops a tenant from using another tier's class
  (§1.3, "Limit Priority Class consumption").
- LimitRanges set CPU/memory default requests only, never a GPU default (a GPU default would
  put a GPU into every container: §1.4).
"""

from __future__ import annotations

from gpuplane.generate.render.base import Bundle, meta
from gpuplane.generate.render.scheduling import tenant_gpu_resources

TIERS = {
    # name, value, preemptionPolicy, description
    "production": (
        "gpuplane-production",
        100000,
        "PreemptLowerPriority",
        "latency-SLO serving and scheduled production training",
    ),
    "research": (
        "gpuplane-research",
        1000,
        "Never",
        "interactive and experimental work; queues ahead, never preempts",
    ),
    "batch": ("gpuplane-batch", 100, "Never", "checkpointing batch jobs; first to be preempted"),
}


def priority_class(tier: str) -> str:
    return TIERS[tier][0]


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    used = sorted({t.tier for t in bp.tenants}, key=lambda x: -TIERS[x][1])
    for tier in used:
        name, value, policy, desc = TIERS[tier]
        bundle.add(
            "40-tenancy",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": meta(name),
                "value": value,
                "preemptionPolicy": policy,
                "globalDefault": False,
                "description": desc,
            },
        )
    if used:
        bundle.decide(
            "tenancy",
            "tenants[*].tier",
            ", ".join(f"{TIERS[t][0]}={TIERS[t][1]}" for t in used),
            "ordered values <= 1e9; research and batch use preemptionPolicy Never so they never evict a "
            "running training rank (losing one rank stalls the whole job)",
            "platform.md §1.5-1.6",
        )
    for i, t in enumerate(bp.tenants):
        bundle.add(
            "00-namespaces",
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": meta(
                    t.name,
                    labels={"gpuplane.io/tier": t.tier, "pod-security.kubernetes.io/enforce": "baseline"},
                ),
            },
        )
        hard: dict[str, str] = {f"requests.{k}": str(v) for k, v in tenant_gpu_resources(bundle, i).items()}
        if t.cpu:
            hard["requests.cpu"] = t.cpu
        if t.memory:
            hard["requests.memory"] = t.memory
        if hard:
            bundle.add(
                "40-tenancy",
                {
                    "apiVersion": "v1",
                    "kind": "ResourceQuota",
                    "metadata": meta("gpu-quota", t.name),
                    "spec": {"hard": dict(sorted(hard.items()))},
                },
            )
        others = [TIERS[x][0] for x in TIERS if x != t.tier]
        bundle.add(
            "40-tenancy",
            {
                "apiVersion": "v1",
                "kind": "ResourceQuota",
                "metadata": meta("other-tiers", t.name),
                "spec": {
                    "hard": {"pods": "0"},
                    "scopeSelector": {
                        "matchExpressions": [
                            {"operator": "In", "scopeName": "PriorityClass", "values": others}
                        ]
                    },
                },
            },
        )
        bundle.add(
            "40-tenancy",
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": meta("defaults", t.name),
                "spec": {
                    "limits": [{"type": "Container", "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]
                },
            },
        )
    if bp.tenants:
        bundle.decide(
            "tenancy",
            "tenants[*].gpu_quota",
            "ResourceQuota requests.nvidia.com/...",
            "only requests.<extended resource> is charged; limits.nvidia.com/gpu and bare nvidia.com/gpu "
            "are accepted but never enforced",
            "platform.md §1.1",
        )
        bundle.decide(
            "tenancy",
            "tenants[*]",
            "quota other-tiers (pods: 0 for other PriorityClasses)",
            "a tenant cannot promote its pods to another tier's PriorityClass",
            "platform.md §1.3",
        )
        bundle.decide(
            "tenancy",
            "LimitRange",
            "default requests cpu 100m / memory 256Mi, no GPU default",
            "a quota on requests.cpu/memory rejects pods without requests; a GPU default would hand a GPU "
            "to every container",
            "platform.md §1.2, §1.4",
        )
