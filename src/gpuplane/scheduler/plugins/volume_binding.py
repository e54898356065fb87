"""VolumeBinding: the pod's PersistentVolumeClaims must exist, be bindable, and reach the node.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding/volume_binding.go
and .../volumebinding/binder.go, with the helpers of k8s.io/component-helpers/storage/volume
(pv_helpers.go) and .../storage/ephemeral (ephemeral.go).

PreFilter (``podHasPVCs``; every error becomes UnschedulableAndUnresolvable with its text):
a claim that does not exist (``persistentvolumeclaim "<name>" not found``, or for a generic
ephemeral volume ``waiting for ephemeral volume controller to create ...``), a ``Lost`` claim,
a claim being deleted, an ephemeral claim the pod does not control (``VolumeIsForPod``). Then
``GetPodVolumeClaims`` sorts the claims: *bound* when ``isPVCFullyBound`` (a volume name and
the ``pv.kubernetes.io/bind-completed`` annotation), else *delayed* when ``IsDelayBindingMode``
(the claim's class exists and is ``WaitForFirstConsumer``) and it names no volume, else
*immediate*: a claim without a class, whose class does not exist, or that is pre-bound. Any
immediate claim gives ``pod has unbound immediate PersistentVolumeClaims``.

Filter (``FindPodVolumes``; reasons UnschedulableAndUnresolvable, in this order):
``checkBoundClaims`` stops at the first bound claim whose PV is missing (``... bound to
non-existent pv(s)``: in practice VolumeZone's PreFilter rejects that pod first) or whose PV
node affinity misses the node (the version's conflict reason); delayed claims with a
``volume.kubernetes.io/selected-node`` annotation for another node fail at once, those without
go through ``findMatchingVolumes`` (``FindMatchingVolume``: smallest PV of the class, not
claimed by another claim, capacity >= request, same volumeMode, not deleting, node affinity,
phase Available, labels matching the claim's ``spec.selector``, access modes), and the rest
through ``checkVolumeProvisions`` (a provisioner other than ``kubernetes.io/no-provisioner``,
the class's ``allowedTopologies``, and CSIStorageCapacity when the CSIDriver opts in:
``node(s) did not have enough free storage``).
Not modelled: in-tree to CSI PV translation (``tryTranslatePVToCSI``).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from gpuplane.k8s.objects import LabelSelector, NodeSelector
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.k8s.selectors import label_selector_matches, node_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.volumes import (
    ANN_SELECTED_NODE,
    claim_class,
    fully_bound,
    get_pvc,
    pod_claim_names,
    pv_node_affinity,
    volume_class,
)
from gpuplane.sources.manifest import Manifest

NAME = "VolumeBinding"
# volume_binding.go PreFilter
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ERR_PVC_NOT_FOUND = 'persistentvolumeclaim "{}" not found'
ERR_EPHEMERAL_WAITING = 'waiting for ephemeral volume controller to create the persistentvolumeclaim "{}"'
ERR_PVC_LOST = 'persistentvolumeclaim "{}" bound to non-existent persistentvolume "{}"'
ERR_PVC_DELETING = 'persistentvolumeclaim "{}" is being deleted'
# component-helpers storage/ephemeral/ephemeral.go VolumeIsForPod
ERR_EPHEMERAL_NOT_OWNED = "PVC {}/{} was not created for pod {}/{} (pod is not owner)"
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


def _controlled_by(obj: Manifest, uid: str) -> bool:
    """``metav1.IsControlledBy``: an owner reference with ``controller: true`` and that uid."""
    return any(
        isinstance(o, dict) and o.get("controller") is True and o.get("uid") == uid
        for o in obj.metadata.get("ownerReferences") or ()
    )


def _claim_selector(pvc: Manifest) -> LabelSelector | None:
    raw = pvc.get("spec", "selector")
    if not isinstance(raw, dict):
        return None
    try:
        return msgspec.convert(raw, LabelSelector, strict=False)
    except msgspec.ValidationError:
        return None


class VolumeBinding(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        return bool(pod_claim_names(ctx.pod))

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        claims = pod_claim_names(ctx.pod)
        if not claims:
            return None, None
        cluster = ctx.index.cluster
        pod = ctx.pod
        found: list[Manifest] = []
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
            if ephemeral and not _controlled_by(pvc, pod.metadata.uid or ""):
                return None, unresolvable(
                    NAME,
                    ERR_EPHEMERAL_NOT_OWNED.format(ctx.namespace, claim, ctx.namespace, pod.metadata.name),
                )
            found.append(pvc)
        bound: list[tuple[Manifest, Manifest | None]] = []
        delayed: list[tuple[Manifest, Manifest]] = []
        immediate = False
        for pvc in found:
            if fully_bound(pvc):
                bound.append((pvc, cluster.pvs.get(str(pvc.get("spec", "volumeName")))))
                continue
            # IsDelayBindingMode: no class, or a class that does not exist, is not delayed. A
            # class without volumeBindingMode reads as Immediate, the API server's default.
            sc = cluster.storage_classes.get(claim_class(pvc)) if claim_class(pvc) else None
            delay = sc is not None and sc.data.get("volumeBindingMode") == "WaitForFirstConsumer"
            if delay and not pvc.get("spec", "volumeName"):
                assert sc is not None
                delayed.append((pvc, sc))
            else:
                immediate = True
        if immediate:
            return None, unresolvable(NAME, ERR_UNBOUND_IMMEDIATE)
        ctx.state.write(BindingState(bound, delayed))
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(BindingState)
        if not state.bound and not state.delayed:
            return None
        bound_ok, pvs_found = self._check_bound(state.bound, node)
        unbound_ok, enough_storage = self._check_unbound(ctx, state.delayed, node)
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(ctx.wording.volume_conflict_reason)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return unresolvable(NAME, *reasons) if reasons else None

    @staticmethod
    def _check_bound(bound: list[tuple[Manifest, Manifest | None]], node: NodeInfo) -> tuple[bool, bool]:
        """``checkBoundClaims``: (node affinity satisfied, PVs found), stopping at the first miss."""
        for _, pv in bound:
            if pv is None:
                return True, False
            selector = pv_node_selector(pv_node_affinity(pv))
            if selector is not None and not node_selector_matches(selector, node.node):
                return False, True
        return True, True

    def _check_unbound(
        self, ctx: PodContext, delayed: list[tuple[Manifest, Manifest]], node: NodeInfo
    ) -> tuple[bool, bool]:
        """The claimsToBind part of ``FindPodVolumes``: (unbound satisfied, sufficient storage)."""
        if not delayed:
            return True, True
        to_match: list[tuple[Manifest, Manifest]] = []
        to_provision: list[tuple[Manifest, Manifest]] = []
        for pvc, sc in delayed:
            selected = pvc.annotations.get(ANN_SELECTED_NODE)
            if selected is not None:
                if selected != node.name:
                    return False, True
                to_provision.append((pvc, sc))
            else:
                to_match.append((pvc, sc))
        satisfied = True
        if to_match:
            satisfied, unmatched = self._find_matching(ctx, to_match, node)
            to_provision.extend(unmatched)
        if to_provision:
            return self._check_provisions(ctx, to_provision, node)
        return satisfied, True

    @staticmethod
    def _find_matching(
        ctx: PodContext, claims: list[tuple[Manifest, Manifest]], node: NodeInfo
    ) -> tuple[bool, list[tuple[Manifest, Manifest]]]:
        """``findMatchingVolumes``: claims by increasing request, each taking the smallest PV
        ``FindMatchingVolume`` accepts; returns (all matched, the claims left to provision)."""
        ordered = sorted(claims, key=lambda c: _storage(c[0], "spec", "resources", "requests", "storage"))
        chosen: set[str] = set()
        unmatched: list[tuple[Manifest, Manifest]] = []
        for pvc, sc in ordered:
            pv = _matching_volume(ctx, pvc, node, chosen)
            if pv is None:
                unmatched.append((pvc, sc))
                continue
            chosen.add(pv.name)
        return not unmatched, unmatched

    @staticmethod
    def _check_provisions(
        ctx: PodContext, claims: list[tuple[Manifest, Manifest]], node: NodeInfo
    ) -> tuple[bool, bool]:
        """``checkVolumeProvisions``: (provisioning possible, sufficient storage)."""
        for pvc, sc in claims:
            provisioner = sc.data.get("provisioner")
            if provisioner in (None, "", NO_PROVISIONER):
                return False, True
            if not _topology_allows(sc.data.get("allowedTopologies"), node.labels):
                return False, True
            if not _enough_capacity(ctx, str(provisioner), pvc, sc, node):
                return True, False
        return True, True


def _bound_to_claim(pv: Manifest, pvc: Manifest) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names this claim (and its uid, when set)."""
    ref = pv.get("spec", "claimRef")
    if not isinstance(ref, dict):
        return False
    if ref.get("name") != pvc.name or (ref.get("namespace") or "") != (pvc.namespace or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == pvc.metadata.get("uid")


@dataclass(slots=True)
class _PvsByClass:
    """The cluster's PVs by storage class, each class split into the PVs without a claimRef
    and those naming a claim ((namespace, name) -> PVs), in the cluster's order. Built once
    per scheduling cycle (CycleState): FindMatchingVolume runs for every node, and scanning
    every PV of the cluster there cost nodes x PVs per Pending pod."""

    free: dict[str, list[Manifest]]
    claimed: dict[str, dict[tuple[str, str], list[Manifest]]]


def _pvs_by_class(ctx: PodContext) -> _PvsByClass:
    found = ctx.state.read(_PvsByClass)
    if found is None:
        free: dict[str, list[Manifest]] = {}
        claimed: dict[str, dict[tuple[str, str], list[Manifest]]] = {}
        for pv in ctx.index.cluster.pvs.values():
            ref = pv.get("spec", "claimRef")
            if ref:
                key = (
                    (str(ref.get("namespace") or ""), str(ref.get("name")))
                    if isinstance(ref, dict)
                    else ("", "")
                )
                claimed.setdefault(volume_class(pv), {}).setdefault(key, []).append(pv)
            else:
                free.setdefault(volume_class(pv), []).append(pv)
        found = _PvsByClass(free, claimed)
        ctx.state.write(found)
    return found


def _candidate_volumes(ctx: PodContext, pvc: Manifest, wanted_class: str) -> list[Manifest]:
    """The PVs ``FindMatchingVolume`` can accept for ``pvc``: of its class, and without a
    claimRef or with one naming it (a PV claimed by another claim is skipped there first)."""
    pvs = _pvs_by_class(ctx)
    mine = pvs.claimed.get(wanted_class, {}).get((pvc.namespace or "default", pvc.name), [])
    return [*mine, *pvs.free.get(wanted_class, ())]


def _matching_volume(ctx: PodContext, pvc: Manifest, node: NodeInfo, excluded: set[str]) -> Manifest | None:
    """``FindMatchingVolume`` on the scheduler path (a node, delayBinding true). The candidates
    come from :func:`_candidate_volumes`; their order differs from the cluster's only in that the
    PVs naming this claim come first, which changes nothing: such a PV is returned at once (or
    skipped), never compared as the smallest."""
    want = _storage(pvc, "spec", "resources", "requests", "storage")
    wanted_class = claim_class(pvc)
    selector = _claim_selector(pvc)
    has_selector = isinstance(pvc.get("spec", "selector"), dict)
    claim_mode = pvc.get("spec", "volumeMode") or "Filesystem"
    modes = set(pvc.get("spec", "accessModes") or ())
    smallest: Manifest | None = None
    smallest_size = 0
    for pv in _candidate_volumes(ctx, pvc, wanted_class):  # ListPVs(storageClassName): the claim's class
        if pv.name in excluded:
            continue
        if pv.get("spec", "claimRef") and not _bound_to_claim(pv, pvc):
            continue
        size = _storage(pv, "spec", "capacity", "storage")
        if size < want:
            continue
        if (pv.get("spec", "volumeMode") or "Filesystem") != claim_mode:
            continue
        if pv.metadata.get("deletionTimestamp"):
            continue
        node_selector = pv_node_selector(pv_node_affinity(pv))
        affinity_ok = node_selector is None or node_selector_matches(node_selector, node.node)
        if _bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        # A PV without status reads as Available: the PV controller sets that phase at creation.
        if pv.get("status", "phase") not in (None, "Available"):
            continue
        if has_selector and (selector is None or not label_selector_matches(selector, pv.labels)):
            continue
        if not affinity_ok:
            continue
        if not modes <= set(pv.get("spec", "accessModes") or ()):
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = pv, size
    return smallest


def _topology_allows(topologies: object, labels: dict[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match every node; else any term whose every
    expression's key has one of its values on the node."""
    if not isinstance(topologies, list) or not topologies:
        return True
    for term in topologies:
        exprs = (term.get("matchLabelExpressions") or []) if isinstance(term, dict) else []
        if all(
            isinstance(e, dict) and labels.get(str(e.get("key"))) in (e.get("values") or ()) for e in exprs
        ):
            return True
    return False


def _enough_capacity(ctx: PodContext, provisioner: str, pvc: Manifest, sc: Manifest, node: NodeInfo) -> bool:
    """``hasEnoughCapacity``: only for a CSIDriver with ``storageCapacity: true``, some
    CSIStorageCapacity of the class reaching the node (``nodeTopology``) must hold the request
    (``maximumVolumeSize`` when set, else ``capacity``)."""
    raw = pvc.get("spec", "resources", "requests", "storage")
    if raw is None:
        return True
    cluster = ctx.index.cluster
    driver = next((d for d in cluster.by_kind("CSIDriver", "storage.k8s.io") if d.name == provisioner), None)
    if driver is None or driver.get("spec", "storageCapacity") is not True:
        return True
    want = _storage(pvc, "spec", "resources", "requests", "storage")
    for cap in cluster.by_kind("CSIStorageCapacity", "storage.k8s.io"):
        if cap.data.get("storageClassName") != sc.name:
            continue
        limit_raw = cap.data.get("maximumVolumeSize") or cap.data.get("capacity")
        if limit_raw is None:
            continue
        try:
            limit = quantity_value(limit_raw)
        except (ValueError, TypeError):
            continue
        topology = cap.data.get("nodeTopology")
        if limit < want or not isinstance(topology, dict):
            continue
        try:
            selector = msgspec.convert(topology, LabelSelector, strict=False)
        except msgspec.ValidationError:
            continue
        if label_selector_matches(selector, node.labels):
            return True
    return False
