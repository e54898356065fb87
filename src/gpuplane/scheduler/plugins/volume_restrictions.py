"""VolumeRestrictions: ReadWriteOncePod claims already used by another pod.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go.
PreFilter counts the pods (anywhere in the cluster) that use one of this pod's
ReadWriteOncePod claims; Filter then rejects every node with
``ErrReasonReadWriteOncePodConflict`` (Unschedulable: preempting the holder frees the claim).
``ErrReasonDiskConflict`` concerns in-tree inline disks (GCE PD, EBS, RBD, iSCSI) that the
typed Pod model does not carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unschedulable
from gpuplane.scheduler.plugins.base import FilterPlugin
from gpuplane.scheduler.plugins.volumes import get_pvc, pod_claim_names

NAME = "VolumeRestrictions"
# volume_restrictions.go
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"


@dataclass(slots=True)
class ReadWriteOncePodState:
    """The pods (with their node index) already using one of the pod's ReadWriteOncePod claims."""

    users: list[tuple[int, object]]


class VolumeRestrictions(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        rwop: set[str] = set()
        for claim, _ in pod_claim_names(ctx.pod):
            pvc = get_pvc(ctx, claim)
            modes = pvc.get("spec", "accessModes") if pvc is not None else None
            if isinstance(modes, list) and "ReadWriteOncePod" in modes:  # a mistyped field: no mode
                rwop.add(claim)
        if not rwop:
            return False
        users: list[tuple[int, object]] = []
        for other, j in sorted(ctx.index.pods.in_namespace(ctx.namespace), key=lambda entry: entry[1]):
            if any(c in rwop for c, _ in pod_claim_names(other)):
                users.append((j, other))
        ctx.state.write(ReadWriteOncePodState(users))
        return bool(users)

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        users = ctx.state.require(ReadWriteOncePodState).users
        remaining = [u for u in users if not any(u[1] is removed for removed in ctx.removed.get(u[0], ()))]
        if remaining:
            return unschedulable(NAME, ERR_REASON_RWOP_CONFLICT)
        return None
