"""PersistentVolumeClaims that bind when their first pod is placed (WaitForFirstConsumer).

Upstream: VolumeBinding's Reserve/PreBind (kubernetes/kubernetes
pkg/scheduler/framework/plugins/volumebinding/binder.go ``AssumePodVolumes`` /
``BindPodVolumes``): for each claim of the pod that is not bound yet and whose StorageClass has
``volumeBindingMode: WaitForFirstConsumer``, the scheduler either binds a matching Available
PersistentVolume reachable from the chosen node (the smallest that fits, ``findMatchingVolume``)
or asks the class's provisioner to create one for that node (annotation
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
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.k8s.selectors import node_selector_matches
from gpuplane.scheduler.plugins.volume_binding import NO_PROVISIONER, pv_node_selector
from gpuplane.scheduler.plugins.volumes import pod_claim_names, pv_node_affinity
from gpuplane.sources.manifest import Manifest

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def _storage(obj: Manifest, *path: str) -> int:
    try:
        return quantity_value(obj.get(*path) or 0)
    except (ValueError, TypeError):
        return 0


def _matching_pv(state: ClusterState, pvc: Manifest, class_name: str, node: Node) -> Manifest | None:
    want = _storage(pvc, "spec", "resources", "requests", "storage")
    modes = set(pvc.get("spec", "accessModes") or ())
    best: tuple[int, str, Manifest] | None = None
    for pv in state.pvs.values():
        if pv.get("spec", "storageClassName") != class_name or pv.get("spec", "claimRef"):
            continue
        if pv.get("status", "phase") not in (None, "Available"):
            continue
        size = _storage(pv, "spec", "capacity", "storage")
        if size < want or not modes <= set(pv.get("spec", "accessModes") or ()):
            continue
        selector = pv_node_selector(pv_node_affinity(pv))
        if selector is not None and not node_selector_matches(selector, node):
            continue
        if best is None or (size, pv.name) < best[:2]:
            best = (size, pv.name, pv)
    return best[2] if best is not None else None


def _copy(obj: Manifest, data: dict[str, Any]) -> Manifest:
    return Manifest(data, obj.path, obj.line, obj.doc)


def bind_claims(state: ClusterState, pod: Pod, node: Node) -> bool:
    """Bind ``pod``'s unbound WaitForFirstConsumer claims for ``node``; True if any changed."""
    changed = False
    namespace = pod.metadata.namespace or "default"
    for claim, _ephemeral in pod_claim_names(pod):
        key = (namespace, claim)
        pvc = state.pvcs.get(key)
        if pvc is None or pvc.get("spec", "volumeName"):
            continue
        class_name = pvc.get("spec", "storageClassName") or ""
        sc = state.storage_classes.get(class_name)
        if sc is None or sc.data.get("volumeBindingMode") != "WaitForFirstConsumer":
            continue
        pv = _matching_pv(state, pvc, class_name, node)
        if pv is None:
            if sc.data.get("provisioner") in (None, "", NO_PROVISIONER):
                continue
            uid = pvc.metadata.get("uid") or f"sim-{namespace}-{claim}"
            volume = f"pvc-{uid}"
            pv = Manifest(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolume",
                    "metadata": {"name": volume},
                    "spec": {
                        "storageClassName": class_name,
                        "accessModes": list(pvc.get("spec", "accessModes") or ()),
                        "capacity": {"storage": pvc.get("spec", "resources", "requests", "storage") or "0"},
                    },
                    "status": {"phase": "Available"},
                },
                pvc.path,
                pvc.line,
                pvc.doc,
            )
        data = dict(pv.data)
        data["spec"] = {**(pv.get("spec") or {}), "claimRef": {"namespace": namespace, "name": claim}}
        data["status"] = {"phase": "Bound"}
        bound_pv = _copy(pv, data)
        state.put_pv(bound_pv)
        claim_data = dict(pvc.data)
        meta = dict(pvc.metadata)
        # the PV controller marks the binding complete (pv.kubernetes.io/bind-completed), which the
        # scheduler's binder requires before it counts a claim as bound (isPVCFullyBound)
        meta["annotations"] = {
            **(pvc.metadata.get("annotations") or {}),
            SELECTED_NODE: node.metadata.name,
            "pv.kubernetes.io/bind-completed": "yes",
        }
        claim_data["metadata"] = meta
        claim_data["spec"] = {**(pvc.get("spec") or {}), "volumeName": bound_pv.name}
        claim_data["status"] = {"phase": "Bound"}
        state.pvcs[key] = _copy(pvc, claim_data)
        changed = True
    return changed
