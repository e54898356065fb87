"""Karpenter NodePools with GPUs: taints, consolidation, limits."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.context import join_labels
from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.finding import AppendItem, Finding
from gpuplane.lint.rules.autoscaling._shared import _gpu_pools, _requirements, _values
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
NODEPOOL_LABEL = "karpenter.sh/nodepool"


def _gpu_taint_key(pool: Manifest) -> str:
    for _i, req in _requirements(pool):
        if req.get("key") in (
            "karpenter.k8s.aws/instance-gpu-manufacturer",
            "karpenter.azure.com/sku-gpu-manufacturer",
        ) and "amd" in [v.lower() for v in _values(req)]:
            return "amd.com/gpu"
    return "nvidia.com/gpu"


@rule(
    id="karpenter-gpu-nodepool-untainted",
    severity="warning",
    category="autoscaling",
    summary="Karpenter NodePool that can launch GPU instances has no NoSchedule taint.",
    fixable=True,
    fix_safety="unsafe",
)
def karpenter_gpu_nodepool_untainted(ctx: LintContext) -> Iterator[Finding]:
    for pool, idx in _gpu_pools(ctx):
        taints = pool.get("spec", "template", "spec", "taints")
        if isinstance(taints, list) and any(
            isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute") for t in taints
        ):
            continue
        key = _gpu_taint_key(pool)
        yield ctx.report(
            pool,
            ("spec", "template", "spec", "requirements", idx),
            f"NodePool {pool.name} can launch GPU instances but its nodes carry no NoSchedule taint: CPU-only pods "
            "will be packed onto the GPU nodes, starving GPU pods of CPU/memory and keeping the nodes from "
            "consolidating.",
            f"Add the taint {{key: {key}, effect: NoSchedule}} to spec.template.spec.taints and a matching "
            "toleration to GPU pods (automatic where the ExtendedResourceToleration admission plugin runs).",
            patch=(AppendItem(("spec", "template", "spec", "taints"), {"key": key, "effect": "NoSchedule"}),),
        )


def _blocks_underutilized(budgets: Any) -> bool:
    """A budget that always (no schedule) allows 0 nodes for Underutilized disruptions."""
    if not isinstance(budgets, list):
        return False
    for b in budgets:
        if not isinstance(b, dict) or b.get("schedule"):
            continue
        if str(b.get("nodes", "")).strip() not in ("0", "0%"):
            continue
        reasons = b.get("reasons")
        if not reasons or (isinstance(reasons, list) and "Underutilized" in reasons):
            return True
    return False


def _do_not_disrupt(template: Any) -> bool:
    meta = template.get("metadata") if isinstance(template, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    value = ann.get(DO_NOT_DISRUPT) if isinstance(ann, dict) else None
    return value is not None and str(value).lower() != "false"


def _pinned_pool(template: Any) -> str | None:
    spec = template.get("spec") if isinstance(template, dict) else None
    selector = spec.get("nodeSelector") if isinstance(spec, dict) else None
    value = selector.get(NODEPOOL_LABEL) if isinstance(selector, dict) else None
    return str(value) if value is not None else None


@rule(
    id="karpenter-consolidation-disrupts-training",
    severity="warning",
    category="autoscaling",
    summary="GPU NodePool consolidates underutilized nodes while training pods lack karpenter.sh/do-not-disrupt.",
)
def karpenter_consolidation_disrupts_training(ctx: LintContext) -> Iterator[Finding]:
    pools = _gpu_pools(ctx)
    if not pools:
        return
    unprotected: list[str] = []  # training workloads that can run on any pool
    pinned: dict[str, list[str]] = {}
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        if id(ps.source) in seen or not kinds.is_training(ps) or _do_not_disrupt(ps.template):
            continue
        seen.add(id(ps.source))
        label = obj_label(ps.source)
        pool_name = _pinned_pool(ps.template)
        if pool_name is None:
            unprotected.append(label)
        else:
            pinned.setdefault(pool_name, []).append(label)
    for pool, _idx in pools:
        victims = unprotected + pinned.get(pool.name, [])
        if not victims:
            continue
        disruption = pool.get("spec", "disruption", default={})
        disruption = disruption if isinstance(disruption, dict) else {}
        policy = disruption.get("consolidationPolicy") or "WhenEmptyOrUnderutilized"
        if policy in ("WhenEmpty",) or str(disruption.get("consolidateAfter", "")) == "Never":
            continue
        if pool.get("spec", "replicas") is not None or _blocks_underutilized(disruption.get("budgets")):
            continue
        path: FieldPath = (
            ("spec", "disruption", "consolidationPolicy")
            if "consolidationPolicy" in disruption
            else (("spec", "disruption") if "disruption" in pool.data.get("spec", {}) else ("spec",))
        )
        shown = join_labels(victims)
        yield ctx.report(
            pool,
            path,
            f"GPU NodePool {pool.name} consolidates underutilized nodes ({policy}) with no budget blocking it, and "
            f"training pods of {shown} lack {DO_NOT_DISRUPT}: Karpenter can evict a rank mid-run and the whole "
            "job loses its progress since the last checkpoint.",
            f'Annotate the training pod templates with {DO_NOT_DISRUPT}: "true", or set '
            'consolidationPolicy: WhenEmpty / a budget {nodes: "0", reasons: [Underutilized]} on this NodePool.',
        )


@rule(
    id="karpenter-gpu-limit-missing",
    severity="info",
    category="autoscaling",
    summary="GPU NodePool without a GPU limit: unbounded spend.",
    tier="opt-in",
)
def karpenter_gpu_limit_missing(ctx: LintContext) -> Iterator[Finding]:
    for pool, _idx in _gpu_pools(ctx):
        if pool.get("spec", "replicas") is not None:
            continue  # static NodePool: a fixed node count, limits are not the spend bound
        limits = pool.get("spec", "limits")
        if isinstance(limits, dict) and any(
            isinstance(r, str) and kinds.is_accelerator_resource(r) for r in limits
        ):
            continue
        path: FieldPath = ("spec", "limits") if isinstance(limits, dict) else ("spec",)
        key = _gpu_taint_key(pool)
        yield ctx.report(
            pool,
            path,
            f"GPU NodePool {pool.name} has no {key} limit: Karpenter will launch as many GPU instances as pending "
            "pods ask for, with no bound on spend.",
            f"Set spec.limits.{key} to the most GPUs this pool may hold (e.g. {key}: 32).",
        )
