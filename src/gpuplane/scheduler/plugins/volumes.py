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
