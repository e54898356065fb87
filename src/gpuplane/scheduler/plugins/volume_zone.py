"""VolumeZone: a bound PersistentVolume's zone/region labels must match the node's.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/volumezone/volume_zone.go
(``ErrReasonConflict``, UnschedulableAndUnresolvable). Label values may list several zones
joined with ``__`` (``volumehelpers.LabelZonesToSet``).

PreFilter (``getPVbyPod``, since v1.27, PR #114149) reads every ``persistentVolumeClaim``
volume (not ephemeral ones): a claim naming no volume must have a class that exists, has a
binding mode and is WaitForFirstConsumer (skipped), else the pod is rejected; a named volume
must exist. Lister NotFound errors become UnschedulableAndUnresolvable with their text
(``getErrorAsStatus``): ``persistentvolume "<name>" not found``. VolumeBinding's PreFilter runs
first and already rejects the unbound cases, so in practice only the missing PV reaches here
(and DynamicResources' PreFilter never runs after it).

Filter reads the node's zone and region labels only, so the Filter stage asks it once per node
shape (``filter_nodes``, the ``NodeSetFilter`` capability).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.volumes import by_node_shape, claim_class, get_pvc

NAME = "VolumeZone"
# volume_zone.go ErrReasonConflict
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
# volume_zone.go getPVbyPod, and the listers' NotFound texts (apimachinery errors.NewNotFound)
ERR_PVC_NO_NAME = "PersistentVolumeClaim had no name"
ERR_NO_PV_NO_CLASS = "PersistentVolumeClaim had no pv name and storageClass name"
ERR_PV_NO_NAME = "PersistentVolume had no name"
ERR_PVC_NOT_FOUND = 'persistentvolumeclaim "{}" not found'
ERR_SC_NOT_FOUND = 'storageclass.storage.k8s.io "{}" not found'
ERR_PV_NOT_FOUND = 'persistentvolume "{}" not found'
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
        return any(v.persistent_volume_claim is not None for v in ctx.pod.spec.volumes)

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        wanted: list[tuple[str, set[str]]] = []
        cluster = ctx.index.cluster
        for volume in ctx.pod.spec.volumes:
            if volume.persistent_volume_claim is None:
                continue
            claim = volume.persistent_volume_claim.claim_name
            if not claim:
                return None, unresolvable(NAME, ERR_PVC_NO_NAME)
            pvc = get_pvc(ctx, claim)
            if pvc is None:
                return None, unresolvable(NAME, ERR_PVC_NOT_FOUND.format(claim))
            pv_name = str(pvc.get("spec", "volumeName") or "")
            if not pv_name:
                class_name = claim_class(pvc)
                if not class_name:
                    return None, unresolvable(NAME, ERR_NO_PV_NO_CLASS)
                sc = cluster.storage_classes.get(class_name)
                if sc is None:
                    return None, unresolvable(NAME, ERR_SC_NOT_FOUND.format(class_name))
                # The API server defaults volumeBindingMode to Immediate: a class read from a
                # snapshot without it is Immediate, not "not set".
                if sc.data.get("volumeBindingMode") == "WaitForFirstConsumer":
                    continue
                return None, unresolvable(NAME, ERR_PV_NO_NAME)
            pv = cluster.pvs.get(pv_name)
            if pv is None:
                return None, unresolvable(NAME, ERR_PV_NOT_FOUND.format(pv_name))
            for key in TOPOLOGY_LABELS:
                value = pv.labels.get(key)
                if value:
                    wanted.append((key, set(str(value).split("__"))))
        ctx.state.write(ZoneState(wanted))
        return None, None

    def reprieve_neutral(self, ctx: PodContext, pod: Pod) -> bool:
        """Always: the verdict reads the pod's claims, the PVs and the node's labels, never the
        pods on the node, so preemption's reprieve need not re-run it."""
        return True

    def reprieve_nodes(self, ctx: PodContext) -> Collection[int]:
        """No node: no pod is ever one this plugin counts (:meth:`reprieve_neutral`)."""
        return ()

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without zone/region labels has no constraint
        state = ctx.state.read(ZoneState)
        for key, values in state.wanted if state is not None else ():
            node_value = labels.get(key)
            if node_value is None:
                node_value = labels.get(_GA.get(key, key))
            if node_value is None or node_value not in values:
                return unresolvable(NAME, ERR_REASON_CONFLICT)
        return None

    def filter_nodes(self, ctx: PodContext, nodes: np.ndarray) -> list[tuple[np.ndarray, Status]]:
        """:meth:`filter` on every node of ``nodes`` at once, once per node shape: it reads only
        the topology labels, never the hostname."""
        state = ctx.state.read(ZoneState)
        if state is None or not state.wanted:
            return []
        return by_node_shape(ctx, nodes, lambda node: self.filter(ctx, node), per_node=False)
