"""VolumeZone: a bound PersistentVolume's zone/region labels must match the node's.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/volumezone/volume_zone.go
(``ErrReasonConflict``, UnschedulableAndUnresolvable). Label values may list several zones
joined with ``__`` (``volumehelpers.LabelZonesToSet``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin
from gpuplane.scheduler.plugins.volumes import get_pvc, pod_claim_names

NAME = "VolumeZone"
# volume_zone.go ErrReasonConflict
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
TOPOLOGY_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)

# volume_zone.go translateToGALabel: a beta PV label is matched against the node's GA label.
_GA = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}


@dataclass(slots=True)
class ZoneState:
    """The (topology label, allowed values) pairs of the pod's bound PVs."""

    wanted: list[tuple[str, set[str]]]


class VolumeZone(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        wanted: list[tuple[str, set[str]]] = []
        cluster = ctx.index.cluster
        for claim, _ in pod_claim_names(ctx.pod):
            pvc = get_pvc(ctx, claim)
            name = pvc.get("spec", "volumeName") if pvc is not None else None
            pv = cluster.pvs.get(name) if name else None
            if pv is None:
                continue
            for key in TOPOLOGY_LABELS:
                value = pv.labels.get(key)
                if value:
                    wanted.append((key, set(str(value).split("__"))))
        ctx.state.write(ZoneState(wanted))
        return bool(wanted)

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone/region labels has no constraint
        for key, values in ctx.state.require(ZoneState).wanted:
            node_value = labels.get(key)
            if node_value is None:
                node_value = labels.get(_GA.get(key, key))
            if node_value is None or node_value not in values:
                return unresolvable(NAME, ERR_REASON_CONFLICT)
        return None
