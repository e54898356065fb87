"""Rolling updates of GPU Deployments."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.rules._common import as_dict, as_int, obj_label
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext


def _scaled(value: Any, total: int, round_up: bool) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent``: an int, or a percentage of ``total``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%") and text[:-1].isdigit():
            scaled = int(text[:-1]) * total / 100
            return math.ceil(scaled) if round_up else math.floor(scaled)
        if text.isdigit():
            return int(text)
    return None


def _spare_gpus(ctx: LintContext, need: dict[str, int], memo: dict[Any, bool]) -> bool | None:
    """True when some cluster node has free GPUs for one more pod; None without a cluster.
    ``memo`` keeps the answer per distinct ask, each asked of the distinct free GPU counts of the
    nodes (lint.cluster_nodes), so many GPU Deployments never walk the nodes once each."""
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return None
    key = tuple(sorted(need.items()))
    found = memo.get(key)
    if found is None:
        found = memo[key] = ctx.cluster_nodes().has_free(need)
    return found


def _autoscaler_present(ctx: LintContext) -> bool:
    """The cluster runs a node autoscaler that adds a node for a Pending surge pod: a Karpenter
    NodePool, or a Cluster Autoscaler pod (image ``cluster-autoscaler``)."""
    if ctx.by_kind("NodePool", "karpenter.sh", include_cluster=True):
        return True
    cluster = ctx.cluster
    pods = cluster.pods if cluster is not None else []
    return any("cluster-autoscaler" in (c.image or "") for pod in pods for c in pod.spec.containers)


@rule(
    id="gpu-rollout-surge-deadlock",
    severity="warning",
    category="serving",
    summary="GPU Deployment rolling update with maxUnavailable 0 and maxSurge > 0 stalls on a full GPU pool.",
    context="optional",
    fixable=True,
    fix_safety="unsafe",
)
def gpu_rollout_surge_deadlock(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
    spare_memo: dict[Any, bool] = {}
    autoscaler: bool | None = None  # computed on first need: it walks every pod of the cluster
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.kind != "Deployment" or id(src) in seen:
            continue
        seen.add(id(src))
        spec = src.data.get("spec")
        if not isinstance(spec, dict):
            continue
        strategy = as_dict(spec.get("strategy"))
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            continue
        replicas = as_int(spec.get("replicas"), 1)
        if replicas < 1:
            continue
        rolling = as_dict(strategy.get("rollingUpdate"))
        surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
        unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
        if surge is None or unavailable is None or unavailable > 0 or surge <= 0:
            continue
        need = ctx.gpu_requests(ps)
        spare = _spare_gpus(ctx, need, spare_memo) if need else None
        if spare is None:
            # no cluster: the upstream defaults (25%/25%) are no decision of the author; an explicit
            # maxUnavailable 0 is, and it stalls wherever the pool is full: info, not a verdict
            if "maxUnavailable" not in rolling:
                continue
            severity = "info"
        else:
            if not spare and autoscaler is None:
                autoscaler = _autoscaler_present(ctx)
            if spare or autoscaler:
                continue  # a node can host the surge pod now, or the autoscaler adds one
            severity = "warning"
        if "maxUnavailable" in rolling:
            path: FieldPath = ("spec", "strategy", "rollingUpdate", "maxUnavailable")
        elif "strategy" in spec:
            path = ("spec", "strategy")
        elif "replicas" in spec:
            path = ("spec", "replicas")
        else:
            path = ("spec",)
        gpus = ", ".join(f"{n}: {c}" for n, c in sorted(need.items())) or "GPUs"
        evidence = (
            "no node of the cluster has the spare GPUs and no autoscaler would add one, so the rollout "
            "stalls with the surge pod Pending (Insufficient GPUs)"
            if severity == "warning"
            else "on a full GPU pool without an autoscaler the rollout stalls with the surge pod Pending "
            "(Insufficient GPUs)"
        )
        if replicas > 1:
            fix = (
                "Set spec.strategy.rollingUpdate to maxSurge: 0 and maxUnavailable: 1 (replace pods one at a "
                "time), or keep spare GPU capacity for the surge pod."
            )
            patch: tuple[SetValue, ...] = (
                SetValue(("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
                SetValue(("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1),
            )
        else:
            # one replica: maxUnavailable 1 (or Recreate) takes the service down on every rollout,
            # so there is no mechanical fix, only a capacity decision
            fix = (
                "Keep spare GPU capacity (or a node autoscaler) for the surge pod; maxUnavailable: 1 would "
                "take this single-replica service down on every rollout."
            )
            patch = ()
        yield ctx.report(
            src,
            path,
            f"{obj_label(src)} ({replicas} replica(s), {gpus} per pod) rolls out with maxSurge {surge} and "
            f"maxUnavailable {unavailable}: every new pod needs spare GPUs before an old one stops; {evidence}.",
            fix,
            patch=patch,
            severity=severity,
        )
