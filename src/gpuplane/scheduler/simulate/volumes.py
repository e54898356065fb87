"""PersistentVolumeClaims that bind when their first pod is placed (WaitForFirstConsumer).

Upstream: VolumeBinding's Reserve/PreBind (kubernetes/kubernetes
pkg/scheduler/framework/plugins/volumebinding/binder.go ``AssumePodVolumes`` /
``BindPodVolumes``): for each claim of the pod that is not bound yet and whose StorageClass has
``volumeBindingMode: WaitForFirstConsumer``, the scheduler either binds a matching Available
PersistentVolume reachable from the chosen node (``pv_matching.find_matching_volumes``, the
function VolumeBinding's Filter decided with) or asks the class's provisioner to create one for that node (annotation
``volume.kubernetes.io/selected-node``). From then on the claim is Bound and every other pod
using it sees a bound claim. Claims of an ``Immediate`` class are bound (or not) by the PV
controller, independent of scheduling: an unbound one stays unbound here, and VolumeBinding
keeps reporting ``pod has unbound immediate PersistentVolumeClaims``.

A dynamically provisioned volume gets no node affinity in this model: its topology is the CSI
driver's (e.g. the EBS zone), which a manifest does not state.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node, Pod
from gpuplane.scheduler.plugins.pv_matching import PvIndex, bound_to_claim, find_matching_volumes
from gpuplane.scheduler.plugins.volume_binding import NO_PROVISIONER
from gpuplane.scheduler.plugins.volumes import ANN_SELECTED_NODE, claim_class, pod_claim_names
from gpuplane.sources.manifest import Manifest


def _copy(obj: Manifest, data: dict[str, Any]) -> Manifest:
    return Manifest(data, obj.path, obj.line, obj.doc)


def _delayed_claims(state: ClusterState, pod: Pod) -> list[tuple[Manifest, Manifest]]:
    """The pod's claims VolumeBinding's PreFilter calls delayed (``GetPodVolumeClaims``): not
    bound, naming no volume, of an existing WaitForFirstConsumer class
    (``IsDelayBindingMode``, the class read by ``GetPersistentVolumeClaimClass``), with it."""
    namespace = pod.metadata.namespace or "default"
    delayed: list[tuple[Manifest, Manifest]] = []
    for claim, _ephemeral in pod_claim_names(pod):
        pvc = state.pvcs.get((namespace, claim))
        if pvc is None or pvc.get("spec", "volumeName"):
            continue
        name = claim_class(pvc)
        sc = state.storage_classes.get(name) if name else None
        if sc is None or sc.data.get("volumeBindingMode") != "WaitForFirstConsumer":
            continue
        delayed.append((pvc, sc))
    return delayed


def _provisioned(pvc: Manifest, sc: Manifest, namespace: str) -> Manifest | None:
    """The PV a provisioner creates for ``pvc`` (None: the class has no provisioner)."""
    if sc.data.get("provisioner") in (None, "", NO_PROVISIONER):
        return None
    uid = pvc.metadata.get("uid") or f"sim-{namespace}-{pvc.name}"
    return Manifest(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"pvc-{uid}"},
            "spec": {
                "storageClassName": claim_class(pvc),
                "accessModes": list(pvc.get("spec", "accessModes") or ()),
                "capacity": {"storage": pvc.get("spec", "resources", "requests", "storage") or "0"},
                **({"volumeMode": pvc.get("spec", "volumeMode")} if pvc.get("spec", "volumeMode") else {}),
            },
            "status": {"phase": "Available"},
        },
        pvc.path,
        pvc.line,
        pvc.doc,
    )


def bind_claims(state: ClusterState, pod: Pod, node: Node, pvs: PvIndex | None = None) -> bool:
    """Bind ``pod``'s unbound WaitForFirstConsumer claims for ``node``; True if any changed.

    As ``FindPodVolumes`` then ``AssumePodVolumes``: a claim with a selected node is
    provisioned; the others go through :func:`find_matching_volumes` (the Filter's own
    function, so the PV bound is the one the Filter found on this node), and those without a
    match are provisioned. Every match is computed before the first PV changes. ``pvs``: the
    scheduler's PV index of ``state`` (``pv_matching.pv_index``), else one is built; PVs change
    through ``state.put_pv`` only, which moves ``pvs_version`` so the index is rebuilt."""
    delayed = _delayed_claims(state, pod)
    if not delayed:
        return False
    if pvs is None or pvs.version != state.pvs_version:
        pvs = PvIndex(state.pvs.values(), state.pvs_version)
    namespace = pod.metadata.namespace or "default"
    to_match = [(pvc, sc) for pvc, sc in delayed if ANN_SELECTED_NODE not in pvc.annotations]
    matched: dict[tuple[str, str], Manifest | None] = {}
    for i, pv in find_matching_volumes(pvs, [pvc for pvc, _ in to_match], node):
        matched.setdefault((namespace, to_match[i][0].name), pv)
    changed = False
    for pvc, sc in delayed:
        key = (namespace, pvc.name)
        current = state.pvcs.get(key)
        if current is not pvc:
            continue  # a claim the pod mounts twice: bound on its first mount
        pv = matched.get(key) or _provisioned(pvc, sc, namespace)
        if pv is None:
            continue
        data = dict(pv.data)
        spec = dict(pv.get("spec") or {})
        if not bound_to_claim(pv, pvc):
            # GetBindVolumeToClaim: a pre-bound claimRef (with its uid) is kept as it is
            spec["claimRef"] = {"namespace": namespace, "name": pvc.name}
        data["spec"] = spec
        data["status"] = {"phase": "Bound"}
        bound_pv = _copy(pv, data)
        state.put_pv(bound_pv)
        claim_data = dict(pvc.data)
        meta = dict(pvc.metadata)
        # the PV controller marks the binding complete (pv.kubernetes.io/bind-completed), which the
        # scheduler's binder requires before it counts a claim as bound (isPVCFullyBound)
        annotations = {**(pvc.metadata.get("annotations") or {}), "pv.kubernetes.io/bind-completed": "yes"}
        if key not in matched or matched[key] is None:
            # AssumePodVolumes asks for provisioning on the node; a matched claim names no node
            annotations[ANN_SELECTED_NODE] = node.metadata.name
        meta["annotations"] = annotations
        claim_data["metadata"] = meta
        claim_data["spec"] = {**(pvc.get("spec") or {}), "volumeName": bound_pv.name}
        claim_data["status"] = {"phase": "Bound"}
        state.pvcs[key] = _copy(pvc, claim_data)
        changed = True
    return changed
