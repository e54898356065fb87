"""Shared PVC / PV / StorageClass lookups for the volume plugins (one place, read once per pod),
and their node-set Filter over node shapes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status
from gpuplane.scheduler.index import ClusterIndex
from gpuplane.sources.manifest import Manifest

_SHAPE_IDS = "volumes/shape-ids"


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


def _shape_ids(index: ClusterIndex) -> np.ndarray:
    """``index.shapes.shape_of`` as an array, built once (adding a node clears the cache)."""
    ids: np.ndarray | None = index.cache.get(_SHAPE_IDS)
    if ids is None or len(ids) != index.num_nodes:
        ids = index.cache[_SHAPE_IDS] = np.array(index.shapes.shape_of, dtype=np.int64)
    return ids


def by_node_shape(
    ctx: PodContext, nodes: np.ndarray, judge: Callable[[NodeInfo], Status | None], *, per_node: bool
) -> list[tuple[np.ndarray, Status]]:
    """A ``NodeSetFilter`` answer from a per-node verdict ``judge``: each distinct failing Status
    with its nodes (ascending, as ``nodes`` is), in the order of their first node.

    Why: the volume plugins' verdicts read node labels only (PV node affinity, allowed
    topologies, zone labels), so nodes of one shape (``k8s/node_shapes``: equal labels but the
    hostname) get one verdict, asked of the shape's first node instead of every node for every
    Pending pod. ``per_node``: the verdict reads the node's name or hostname label this cycle,
    so each node is judged itself."""
    infos = ctx.index.node_infos
    if per_node:
        groups: dict[Status, list[int]] = {}
        for j in nodes.tolist():
            status = judge(infos[j])
            if status is not None:
                groups.setdefault(status, []).append(j)
        return [(np.array(where, dtype=np.int64), status) for status, where in groups.items()]
    shapes = ctx.index.shapes
    of_nodes = _shape_ids(ctx.index)[nodes]
    numbers: dict[Status, int] = {}
    code = np.full(len(shapes), -1, dtype=np.int64)
    for sid in np.unique(of_nodes).tolist():
        status = judge(infos[shapes.reps[sid]])
        if status is not None:
            code[sid] = numbers.setdefault(status, len(numbers))
    if not numbers:
        return []
    per = code[of_nodes]
    found = [(nodes[per == k], status) for status, k in numbers.items()]
    found.sort(key=lambda item: int(item[0][0]))
    return found
