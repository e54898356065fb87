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


def _spare_gpus(ctx: LintContext, need: dict[str, int]) -> bool | None:
    """True when some cluster node has free GPUs for one more pod; None without a cluster."""
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return None
    for node in cluster.nodes:
        free = cluster.free(node.metadata.name)
        if all(free.get(name, 0) >= count for name, count in need.items()):
            return True
    return False


@rule(
    id="gpu-rollout-surge-deadlock",
    severity="warning",
    category="serving",
    summary="GPU Deployment rolling update with maxUnavailable 0 and maxSurge > 0 stalls on a full GPU pool.",
    context="optional",
    fixable=True,
)
def gpu_rollout_surge_deadlock(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
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
        if need and _spare_gpus(ctx, need):
            continue
        if "maxUnavailable" in rolling:
            path: FieldPath = ("spec", "strategy", "rollingUpdate", "maxUnavailable")
        elif "strategy" in spec:
            path = ("spec", "strategy")
        elif "replicas" in spec:
            path = ("spec", "replicas")
        else:
            path = ("spec",)
        gpus = ", ".join(f"{n}: {c}" for n, c in sorted(need.items())) or "GPUs"
        yield ctx.report(
            src,
            path,
            f"{obj_label(src)} ({replicas} replica(s), {gpus} per pod) rolls out with maxSurge {surge} and "
            f"maxUnavailable {unavailable}: every new pod needs spare GPUs before an old one stops, so on a full "
            "GPU pool the rollout stalls with the surge pod Pending (Insufficient GPUs).",
            "Set spec.strategy.rollingUpdate to maxSurge: 0 and maxUnavailable: 1 (replace pods in place), "
            "or keep spare GPU capacity for the surge pod.",
            patch=(
                SetValue(("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
                SetValue(("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1),
            ),
        )
