"""Shared PVC / PV / StorageClass lookups for the volume plugins (one place, read once per pod)."""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.sources.manifest import Manifest


def pod_claim_names(pod: Pod) -> list[tuple[str, bool]]:
    """``(claimName, isEphemeral)`` for each PVC-backed volume, in ``spec.volumes`` order.

    A generic ephemeral volume's claim is named ``<pod>-<volume>``
    (``ephemeral.VolumeClaimName``, k8s.io/component-helpers/storage/ephemeral).
    """
    claims: list[tuple[str, bool]] = []
    for volume in pod.spec.volumes:
        if volume.persistent_volume_claim is not None:
            claims.append((volume.persistent_volume_claim.claim_name, False))
        elif volume.ephemeral is not None:
            claims.append((f"{pod.metadata.name}-{volume.name}", True))
    return claims


def get_pvc(ctx: PodContext, name: str) -> Manifest | None:
    return ctx.index.cluster.pvcs.get((ctx.namespace, name))


def pv_node_affinity(pv: Manifest) -> dict[str, Any] | None:
    required = pv.get("spec", "nodeAffinity", "required")
    return required if isinstance(required, dict) else None


# k8s.io/component-helpers/storage/volume pv_helpers.go annotations
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
# the beta annotation GetPersistentVolumeClaimClass reads before spec.storageClassName
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def claim_class(pvc: Manifest) -> str:
    """``GetPersistentVolumeClaimClass`` (component-helpers storage/volume/helpers.go): the
    beta annotation when present, else ``spec.storageClassName``, else ``""``."""
    if ANN_BETA_STORAGE_CLASS in pvc.annotations:
        return str(pvc.annotations[ANN_BETA_STORAGE_CLASS])
    return str(pvc.get("spec", "storageClassName") or "")


def volume_class(pv: Manifest) -> str:
    """``GetPersistentVolumeClass``: the same beta annotation, else ``spec.storageClassName``."""
    if ANN_BETA_STORAGE_CLASS in pv.annotations:
        return str(pv.annotations[ANN_BETA_STORAGE_CLASS])
    return str(pv.get("spec", "storageClassName") or "")


def fully_bound(pvc: Manifest) -> bool:
    """``isPVCFullyBound`` (volumebinding/binder.go): a volume name and the PV controller's
    ``pv.kubernetes.io/bind-completed`` annotation. A claim naming a volume without it is
    pre-bound, which the binder treats as an unbound Immediate claim."""
    return bool(pvc.get("spec", "volumeName")) and ANN_BIND_COMPLETED in pvc.annotations
