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

Speed: a verdict reads the node's labels only (PV node affinity, allowed topologies,
CSIStorageCapacity topology) unless a PV's affinity names the node (hostname label or
``matchFields``) or a claim has a selected node, so the Filter stage asks it once per node
shape (``filter_nodes``); the PVs by class are indexed once per ClusterIndex and rebuilt only
when ``ClusterState.pvs_version`` moves. Preemption's dry runs keep calling ``filter``, which
remembers the cycle's verdict per node shape (no pod on the node changes it, so the reprieve
skips this plugin too).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import msgspec
import numpy as np

from gpuplane.k8s.node_shapes import HOSTNAME_LABEL
from gpuplane.k8s.objects import LabelSelector, Pod
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.k8s.selectors import label_selector_matches, node_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.pv_matching import find_matching_volumes, pv_index, requested_storage
from gpuplane.scheduler.plugins.volumes import (
    ANN_SELECTED_NODE,
    by_node_shape,
    claim_class,
    fully_bound,
    get_pvc,
    pod_claim_names,
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


@dataclass(slots=True)
class BindingState:
    """PreFilter's ``stateData``: bound claims with their PV (None: missing) and the
    WaitForFirstConsumer claims with their StorageClass; then, for this cycle, whether the
    verdict reads node identity (None: not asked yet) and the verdict per node shape.

    Why the memo: preemption's dry runs and the nominated-pods pass call ``filter`` node by
    node; the verdict reads no pod on the node, so every node of a shape gets its shape's."""

    bound: list[tuple[Manifest, Manifest | None]]
    delayed: list[tuple[Manifest, Manifest]]
    reads_identity: bool | None = None
    by_shape: dict[int, Status | None] = field(default_factory=dict)


def _controlled_by(obj: Manifest, uid: str) -> bool:
    """``metav1.IsControlledBy``: an owner reference with ``controller: true`` and that uid."""
    return any(
        isinstance(o, dict) and o.get("controller") is True and o.get("uid") == uid
        for o in obj.metadata.get("ownerReferences") or ()
    )


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

    def reprieve_neutral(self, ctx: PodContext, pod: Pod) -> bool:
        """Always: the verdict reads the pod's claims, the PVs and the node's labels, never the
        pods on the node, so preemption's reprieve need not re-run it."""
        return True

    def reprieve_nodes(self, ctx: PodContext) -> Collection[int]:
        """No node: no pod is ever one this plugin counts (:meth:`reprieve_neutral`)."""
        return ()

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(BindingState)
        if not state.bound and not state.delayed:
            return None
        if state.reads_identity is None:
            state.reads_identity = _reads_node_identity(ctx, state)
        index = ctx.index
        j = node.index
        if state.reads_identity or not 0 <= j < index.num_nodes or index.node_infos[j] is not node:
            return self._judge(ctx, state, node)  # a template node (autoscaler) has no shape
        sid = index.shapes.shape_of[j]
        if sid in state.by_shape:
            return state.by_shape[sid]
        verdict = state.by_shape[sid] = self._judge(ctx, state, node)
        return verdict

    def filter_nodes(self, ctx: PodContext, nodes: np.ndarray) -> list[tuple[np.ndarray, Status]]:
        """:meth:`filter` on every node of ``nodes`` at once: a verdict reads the node's labels
        only (PV node affinity, allowed topologies, CSIStorageCapacity topology), so it is asked
        once per node shape, unless this pod's volumes read the node's name or hostname."""
        state = ctx.state.require(BindingState)
        if not state.bound and not state.delayed:
            return []
        if state.reads_identity is None:
            state.reads_identity = _reads_node_identity(ctx, state)
        return by_node_shape(ctx, nodes, lambda node: self.filter(ctx, node), per_node=state.reads_identity)

    def _judge(self, ctx: PodContext, state: BindingState, node: NodeInfo) -> Status | None:
        """``FindPodVolumes`` on one node, as the Filter's reasons."""
        bound_ok, pvs_found = self._check_bound(ctx, state.bound, node)
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
    def _check_bound(
        ctx: PodContext, bound: list[tuple[Manifest, Manifest | None]], node: NodeInfo
    ) -> tuple[bool, bool]:
        """``checkBoundClaims``: (node affinity satisfied, PVs found), stopping at the first miss."""
        pvs = pv_index(ctx.index)
        for _, pv in bound:
            if pv is None:
                return True, False
            selector = pvs.node_affinity(pv)[0]
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
        """``findMatchingVolumes`` (``pv_matching.find_matching_volumes``, the function simulate's
        binder binds with); returns (all matched, the claims left to provision, in match order)."""
        found = find_matching_volumes(pv_index(ctx.index), [pvc for pvc, _ in claims], node.node)
        unmatched = [claims[i] for i, pv in found if pv is None]
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


def _reads_node_identity(ctx: PodContext, state: BindingState) -> bool:
    """Whether this cycle's VolumeBinding verdict can differ between nodes of one shape: a bound
    or candidate PV whose node affinity reads the node's name or hostname label, a claim already
    given a node (``volume.kubernetes.io/selected-node``), or a class whose allowedTopologies or
    CSIStorageCapacity topology reads the hostname label."""
    pvs = pv_index(ctx.index)
    if any(pv is not None and pvs.node_affinity(pv)[1] for _, pv in state.bound):
        return True
    for pvc, sc in state.delayed:
        if ANN_SELECTED_NODE in pvc.annotations:
            return True
        wanted_class = claim_class(pvc)
        if wanted_class in pvs.free_identity:
            return True
        mine = pvs.claimed.get(wanted_class, {}).get((pvc.namespace or "default", pvc.name), ())
        if any(pvs.node_affinity(pv)[1] for pv in mine):
            return True
        if _topology_reads_hostname(sc.data.get("allowedTopologies")) or sc.name in _capacity_identity(ctx):
            return True
    return False


def _topology_reads_hostname(topologies: object) -> bool:
    """Whether a StorageClass's allowedTopologies names the hostname label."""
    if not isinstance(topologies, list):
        return False
    return any(
        isinstance(e, dict) and e.get("key") == HOSTNAME_LABEL
        for term in topologies
        if isinstance(term, dict)
        for e in term.get("matchLabelExpressions") or ()
    )


_CAPACITY_IDENTITY = "volume-binding/capacity-identity"


def _capacity_identity(ctx: PodContext) -> frozenset[str]:
    """The classes with a CSIStorageCapacity whose ``nodeTopology`` reads the hostname label
    (the cluster's objects other than PVs and PVCs never change, so this is built once)."""
    found: frozenset[str] | None = ctx.index.cache.get(_CAPACITY_IDENTITY)
    if found is None:
        names: set[str] = set()
        for cap in ctx.index.cluster.by_kind("CSIStorageCapacity", "storage.k8s.io"):
            topology = cap.data.get("nodeTopology")
            if not isinstance(topology, dict):
                continue
            labels = topology.get("matchLabels")
            exprs = topology.get("matchExpressions")
            keys = set(labels) if isinstance(labels, dict) else set()
            if isinstance(exprs, list):
                keys.update(e.get("key") for e in exprs if isinstance(e, dict))
            if HOSTNAME_LABEL in keys:
                names.add(str(cap.data.get("storageClassName")))
        found = ctx.index.cache[_CAPACITY_IDENTITY] = frozenset(names)
    return found


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
    want = requested_storage(pvc)
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
