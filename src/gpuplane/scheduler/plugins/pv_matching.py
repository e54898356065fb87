"""Which PersistentVolume a claim binds to: the one matching function of VolumeBinding's Filter
and of ``simulate``'s WaitForFirstConsumer binder, over the PV index both read.

Upstream: kubernetes/kubernetes staging/src/k8s.io/component-helpers/storage/volume/pv_helpers.go
(``FindMatchingVolume``, ``CheckVolumeModeMismatches``, ``CheckAccessModes``,
``IsVolumeBoundToClaim``), .../storage/volume/helpers.go (``GetPersistentVolumeClass``,
``GetPersistentVolumeClaimClass``) and pkg/scheduler/framework/plugins/volumebinding/binder.go
(``findMatchingVolumes``: the claims by increasing request, each taking the smallest PV not
already chosen for the pod, over ``pvCache.ListPVs(class)``).

Why one function: the Filter decides that a node has a PV for each claim, and ``AssumePodVolumes``
binds the PVs the Filter found for the chosen node (the pod's ``podVolumes``); simulate binding
a different PV (by name order, ignoring volumeMode, the claim's selector, pre-bound claimRefs or
the PVs already chosen for the pod) made the simulated cluster drift from the one the Filter
judged. Both now call :func:`find_matching_volumes` on the same :class:`PvIndex`.

One documented difference from upstream: a PV without ``status.phase`` reads as ``Available``
(manifests written by hand carry no status; the PV controller sets that phase at creation).
Ties between PVs of one size go to the first in the cluster's order (upstream keeps the first in
its cache's order, the informer's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from gpuplane.k8s.node_shapes import HOSTNAME_LABEL
from gpuplane.k8s.objects import LabelSelector, Node, NodeSelector
from gpuplane.k8s.quantity import value as quantity_value
from gpuplane.k8s.selectors import label_selector_matches, node_selector_matches
from gpuplane.scheduler.index import ClusterIndex
from gpuplane.scheduler.plugins.volumes import claim_class, pv_node_affinity, volume_class
from gpuplane.sources.manifest import Manifest


def pv_node_selector(raw: dict | None) -> NodeSelector | None:
    """A PV's ``spec.nodeAffinity.required`` as a NodeSelector (None: none, or unreadable)."""
    if not raw:
        return None
    try:
        return msgspec.convert(raw, NodeSelector, strict=False)
    except msgspec.ValidationError:
        return None


def storage(obj: Manifest, *path: str) -> int:
    """A storage quantity at ``path`` in bytes (0 when absent or unreadable)."""
    try:
        return quantity_value(obj.get(*path) or 0)
    except (ValueError, TypeError):
        return 0


def requested_storage(pvc: Manifest) -> int:
    """The claim's ``spec.resources.requests.storage`` (``byPVCSize`` sorts on it)."""
    return storage(pvc, "spec", "resources", "requests", "storage")


def claim_selector(pvc: Manifest) -> LabelSelector | None:
    raw = pvc.get("spec", "selector")
    if not isinstance(raw, dict):
        return None
    try:
        return msgspec.convert(raw, LabelSelector, strict=False)
    except msgspec.ValidationError:
        return None


def bound_to_claim(pv: Manifest, pvc: Manifest) -> bool:
    """``IsVolumeBoundToClaim``: the PV's claimRef names this claim (and its uid, when set)."""
    ref = pv.get("spec", "claimRef")
    if not isinstance(ref, dict):
        return False
    if ref.get("name") != pvc.name or (ref.get("namespace") or "") != (pvc.namespace or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == pvc.metadata.get("uid")


def volume_mode_mismatch(pvc: Manifest, pv: Manifest) -> bool:
    """``CheckVolumeModeMismatches``: an absent volumeMode on either side is ``Filesystem``."""
    return (pvc.get("spec", "volumeMode") or "Filesystem") != (pv.get("spec", "volumeMode") or "Filesystem")


def reads_identity(selector: NodeSelector | None) -> bool:
    """Whether a PV's node affinity reads a node's name (``matchFields``) or hostname label: then
    nodes of one shape may answer it differently (``k8s/node_shapes``)."""
    if selector is None:
        return False
    return any(
        term.match_fields or any(req.key == HOSTNAME_LABEL for req in term.match_expressions)
        for term in selector.node_selector_terms
    )


class PvIndex:
    """The cluster's PVs by storage class (``GetPersistentVolumeClass``), each class split into
    the PVs without a claimRef and those naming a claim ((namespace, name) -> PVs), in the
    cluster's order, with each PV's node affinity parsed on first use.

    Why: FindMatchingVolume and checkBoundClaims run for every node shape of every Pending pod;
    scanning (and parsing) every PV of the cluster there cost nodes x PVs per pod, and building
    this once per scheduling cycle still cost Pending pods x PVs. It is built once per
    :class:`ClusterIndex` (:func:`pv_index`) and rebuilt when ``ClusterState.pvs_version`` moves
    (simulate binding a claim: ``ClusterState.put_pv``)."""

    __slots__ = ("_affinity", "claimed", "free", "free_identity", "version")

    def __init__(self, pvs: Iterable[Manifest], version: int) -> None:
        self.version = version
        self.free: dict[str, list[Manifest]] = {}
        self.claimed: dict[str, dict[tuple[str, str], list[Manifest]]] = {}
        # PV name -> (the PV, its parsed node affinity, whether that reads node identity)
        self._affinity: dict[str, tuple[Manifest, NodeSelector | None, bool]] = {}
        for pv in pvs:
            ref = pv.get("spec", "claimRef")
            if ref:
                key = (
                    (str(ref.get("namespace") or ""), str(ref.get("name")))
                    if isinstance(ref, dict)
                    else ("", "")
                )
                self.claimed.setdefault(volume_class(pv), {}).setdefault(key, []).append(pv)
            else:
                self.free.setdefault(volume_class(pv), []).append(pv)
        # The classes whose unclaimed PVs include one with a node-identity affinity: a claim of
        # such a class is matched node by node.
        self.free_identity = {
            name for name, pvs_of in self.free.items() if any(self.node_affinity(pv)[1] for pv in pvs_of)
        }

    def node_affinity(self, pv: Manifest) -> tuple[NodeSelector | None, bool]:
        """``pv``'s required node affinity, parsed, and whether it reads the node's identity."""
        hit = self._affinity.get(pv.name)
        if hit is not None and hit[0] is pv:
            return hit[1], hit[2]
        selector = pv_node_selector(pv_node_affinity(pv))
        reads = reads_identity(selector)
        self._affinity[pv.name] = (pv, selector, reads)
        return selector, reads

    def candidates(self, pvc: Manifest, wanted_class: str) -> list[Manifest]:
        """The PVs ``FindMatchingVolume`` can accept for ``pvc``: of its class, and without a
        claimRef or with one naming it (a PV claimed by another claim is skipped there first)."""
        mine = self.claimed.get(wanted_class, {}).get((pvc.namespace or "default", pvc.name), [])
        return [*mine, *self.free.get(wanted_class, ())]


_PVS_CACHE = "volume-binding/pvs"


def pv_index(index: ClusterIndex) -> PvIndex:
    """The :class:`PvIndex` of ``index``'s cluster, kept in ``index.cache`` while
    ``pvs_version`` stays (a cleared cache rebuilds it too)."""
    cluster = index.cluster
    found: PvIndex | None = index.cache.get(_PVS_CACHE)
    if found is None or found.version != cluster.pvs_version:
        found = index.cache[_PVS_CACHE] = PvIndex(cluster.pvs.values(), cluster.pvs_version)
    return found


def find_matching_volume(pvs: PvIndex, pvc: Manifest, node: Node, excluded: set[str]) -> Manifest | None:
    """``FindMatchingVolume`` on the scheduler path (a node, delayBinding true). The candidates
    come from :meth:`PvIndex.candidates`; their order differs from the cluster's only in that
    the PVs naming this claim come first, which changes nothing: such a PV is returned at once
    (or ends the search with no match), never compared as the smallest."""
    want = requested_storage(pvc)
    wanted_class = claim_class(pvc)
    selector = claim_selector(pvc)
    has_selector = isinstance(pvc.get("spec", "selector"), dict)
    modes = set(pvc.get("spec", "accessModes") or ())
    smallest: Manifest | None = None
    smallest_size = 0
    for pv in pvs.candidates(pvc, wanted_class):  # ListPVs(storageClassName): the claim's class
        if pv.name in excluded:
            continue
        if pv.get("spec", "claimRef") and not bound_to_claim(pv, pvc):
            continue
        size = storage(pv, "spec", "capacity", "storage")
        if size < want:
            continue
        if volume_mode_mismatch(pvc, pv):
            continue
        if pv.metadata.get("deletionTimestamp"):
            continue
        node_selector = pvs.node_affinity(pv)[0]
        affinity_ok = node_selector is None or node_selector_matches(node_selector, node)
        if bound_to_claim(pv, pvc):
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


def find_matching_volumes(
    pvs: PvIndex, claims: Sequence[Manifest], node: Node
) -> list[tuple[int, Manifest | None]]:
    """``findMatchingVolumes``: each claim (by its position in ``claims``) with the PV it takes
    on ``node`` (None: none, it is left to provisioning), in the order they were matched: by
    increasing request (``sort.Sort(byPVCSize)``; a pod's few claims sort stably there, Go's
    insertion sort below 12 elements), each excluding the PVs chosen before it."""
    order = sorted(range(len(claims)), key=lambda i: requested_storage(claims[i]))
    chosen: set[str] = set()
    found: list[tuple[int, Manifest | None]] = []
    for i in order:
        pv = find_matching_volume(pvs, claims[i], node, chosen)
        if pv is not None:
            chosen.add(pv.name)
        found.append((i, pv))
    return found
