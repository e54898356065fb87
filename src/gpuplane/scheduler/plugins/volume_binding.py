"""VolumeBinding: the pod's PersistentVolumeClaims must exist, be bindable, and reach the node.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
(PreFilter: ``podHasPVCs`` errors become UnschedulableAndUnresolvable with the error text;
unbound claims of an ``Immediate`` class give ``pod has unbound immediate PersistentVolumeClaims``)
and .../volumebinding/binder.go (Filter reasons, all UnschedulableAndUnresolvable, in the
order ``FindPodVolumes`` appends them). The lister's NotFound error reads
``persistentvolumeclaim "<name>" not found`` (apimachinery ``errors.NewNotFound``).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from gpuplane.k8s.objects import NodeSelector
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.k8s.selectors import node_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import Code, NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.volumes import get_pvc, pod_claim_names, pv_node_affinity
from gpuplane.sources.manifest import Manifest

NAME = "VolumeBinding"
# volume_binding.go PreFilter
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_PVC_NOT_FOUND = 'persistentvolumeclaim "{}" not found'
ERR_EPHEMERAL_WAITING = 'waiting for ephemeral volume controller to create the persistentvolumeclaim "{}"'
ERR_PVC_LOST = 'persistentvolumeclaim "{}" bound to non-existent persistentvolume "{}"'
ERR_PVC_DELETING = 'persistentvolumeclaim "{}" is being deleted'
# binder.go
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


def pv_node_selector(raw: dict | None) -> NodeSelector | None:
    if not raw:
        return None
    try:
        return msgspec.convert(raw, NodeSelector, strict=False)
    except msgspec.ValidationError:
        return None


def _storage(pvc_or_pv: Manifest, *path: str) -> int:
    try:
        return quantity_value(pvc_or_pv.get(*path) or 0)
    except (ValueError, TypeError):
        return 0


@dataclass(slots=True)
class BindingState:
    """PreFilter's ``stateData``: bound claims with their PV (None: missing) and the
    WaitForFirstConsumer claims with their StorageClass."""

    bound: list[tuple[Manifest, Manifest | None]]
    delayed: list[tuple[Manifest, Manifest]]


class VolumeBinding(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        return bool(pod_claim_names(ctx.pod))

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        claims = pod_claim_names(ctx.pod)
        if not claims:
            return None, None
        cluster = ctx.index.cluster
        bound: list[tuple[Manifest, Manifest | None]] = []
        delayed: list[tuple[Manifest, Manifest]] = []
        immediate = False
        for claim, ephemeral in claims:
            pvc = get_pvc(ctx, claim)
            if pvc is None:
                text = ERR_EPHEMERAL_WAITING if ephemeral else ERR_PVC_NOT_FOUND
                return None, unresolvable(NAME, text.format(claim))
            if pvc.get("status", "phase") == "Lost":
                return None, unresolvable(
                    NAME, ERR_PVC_LOST.format(claim, pvc.get("spec", "volumeName") or "")
                )
            if pvc.metadata.get("deletionTimestamp"):
                return None, unresolvable(NAME, ERR_PVC_DELETING.format(claim))
        for claim, _ in claims:
            pvc = get_pvc(ctx, claim)
            assert pvc is not None
            volume_name = pvc.get("spec", "volumeName")
            if volume_name:
                bound.append((pvc, cluster.pvs.get(volume_name)))
                continue
            class_name = pvc.get("spec", "storageClassName") or ""
            if not class_name:
                immediate = True
                continue
            sc = cluster.storage_classes.get(class_name)
            if sc is None:
                # binder.go shouldDelayBinding: the class lister's error aborts the cycle.
                text = (
                    f'running PreFilter plugin "{NAME}": storageclass.storage.k8s.io "{class_name}" not found'
                )
                return None, Status(Code.ERROR, (text,), NAME)
            if sc.data.get("volumeBindingMode") == "WaitForFirstConsumer":
                delayed.append((pvc, sc))
            else:
                immediate = True
        if immediate:
            return None, unresolvable(NAME, ERR_UNBOUND_IMMEDIATE)
        ctx.state.write(BindingState(bound, delayed))
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(BindingState)
        bound, delayed = state.bound, state.delayed
        if not bound and not delayed:
            return None
        bound_ok = True
        pvs_found = True
        for _, pv in bound:
            if pv is None:
                pvs_found = False
                continue
            selector = pv_node_selector(pv_node_affinity(pv))
            if selector is not None and not node_selector_matches(selector, node.node):
                bound_ok = False
        unbound_ok = all(self._can_bind(ctx, pvc, sc, node) for pvc, sc in delayed)
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(ctx.wording.volume_conflict_reason)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return unresolvable(NAME, *reasons) if reasons else None

    def _can_bind(self, ctx: PodContext, pvc: Manifest, sc: Manifest, node: NodeInfo) -> bool:
        """A matching Available PV reachable from the node, else dynamic provisioning there."""
        want = _storage(pvc, "spec", "resources", "requests", "storage")
        modes = set(pvc.get("spec", "accessModes") or ())
        for pv in ctx.index.cluster.pvs.values():
            if pv.get("spec", "storageClassName") != sc.name or pv.get("spec", "claimRef"):
                continue
            if pv.get("status", "phase") not in (None, "Available"):
                continue
            if _storage(pv, "spec", "capacity", "storage") < want:
                continue
            if not modes <= set(pv.get("spec", "accessModes") or ()):
                continue
            selector = pv_node_selector(pv_node_affinity(pv))
            if selector is None or node_selector_matches(selector, node.node):
                return True
        if sc.data.get("provisioner") in (None, "", NO_PROVISIONER):
            return False
        topologies = sc.data.get("allowedTopologies")
        if not topologies:
            return True
        labels = node.labels
        for term in topologies:
            exprs = term.get("matchLabelExpressions") or [] if isinstance(term, dict) else []
            if all(labels.get(e.get("key")) in (e.get("values") or ()) for e in exprs):
                return True
        return False
