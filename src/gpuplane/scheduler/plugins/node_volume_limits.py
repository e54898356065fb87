"""NodeVolumeLimits: how many CSI volumes a node may attach.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodevolumelimits/csi.go.
The limit per driver is ``CSINode.spec.drivers[].allocatable.count``; attached volumes are
the unique PVs of the pods on the node plus the new pod's; over the limit gives
``ErrReasonMaxVolumeCountExceeded`` (Unschedulable).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unschedulable
from gpuplane.scheduler.plugins.base import FilterPlugin
from gpuplane.scheduler.plugins.volumes import pod_claim_names

NAME = "NodeVolumeLimits"
# nodevolumelimits/csi.go ErrReasonMaxVolumeCountExceeded
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


def _csi_limits(ctx: PodContext) -> dict[str, dict[str, int]]:
    cached = ctx.index.cache.get(NAME)
    if cached is not None:
        return cached
    limits: dict[str, dict[str, int]] = {}
    for obj in ctx.index.cluster.by_kind("CSINode", "storage.k8s.io"):
        per_driver: dict[str, int] = {}
        for driver in obj.get("spec", "drivers", default=[]) or []:
            count = (driver.get("allocatable") or {}).get("count") if isinstance(driver, dict) else None
            if isinstance(count, int):
                per_driver[str(driver.get("name"))] = count
        if per_driver:
            limits[obj.name] = per_driver
    ctx.index.cache[NAME] = limits
    return limits


def _pod_csi_volumes(ctx: PodContext, namespace: str, pod) -> set[tuple[str, str]]:
    cluster = ctx.index.cluster
    found: set[tuple[str, str]] = set()
    for claim, _ in pod_claim_names(pod):
        pvc = cluster.pvcs.get((namespace, claim))
        if pvc is None:
            continue
        pv = cluster.pvs.get(pvc.get("spec", "volumeName") or "")
        driver = pv.get("spec", "csi", "driver") if pv is not None else None
        if driver and pv is not None:
            found.add((str(driver), pv.name))
        elif pv is None:
            sc = cluster.storage_classes.get(pvc.get("spec", "storageClassName") or "")
            if sc is not None and sc.data.get("provisioner"):
                found.add((str(sc.data["provisioner"]), f"{namespace}/{claim}"))
    return found


@dataclass(slots=True)
class NewVolumesState:
    """The (CSI driver, volume) pairs the pod would attach."""

    volumes: set[tuple[str, str]]


class NodeVolumeLimits(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        if not pod_claim_names(ctx.pod):
            return False
        new = _pod_csi_volumes(ctx, ctx.namespace, ctx.pod)
        ctx.state.write(NewVolumesState(new))
        return bool(new) and bool(_csi_limits(ctx))

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        limits = _csi_limits(ctx).get(node.name)
        if not limits:
            return None
        new = ctx.state.require(NewVolumesState).volumes
        removed = ctx.removed.get(node.index, ())
        attached: set[tuple[str, str]] = set()
        for pod in node.pods:
            if any(pod is r for r in removed):
                continue
            attached |= _pod_csi_volumes(ctx, pod.metadata.namespace or "default", pod)
        for driver, limit in limits.items():
            used = {v for d, v in attached if d == driver}
            adding = {v for d, v in new if d == driver} - used
            if adding and len(used) + len(adding) > limit:
                return unschedulable(NAME, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None
