"""What why-pending's GPU causes read of the nodes, as arrays over the scheduler's node index.

Why: the causes of one Pending pod speak for thousands of nodes (every node that lacks the GPU
it asks), and 2,000 Pending pods asked the same per-node questions of the same nodes, one node
name at a time (issue 14: pending x nodes). What a cause reads of a node is either fixed for the
run (its name, which GPU names it advertises, its GPU model and how a resource is shared there:
labels and allocatable, which change only when a node is added) or its free amount of one
resource, which the index's requested / allocatable matrices hold for every node at once. So the
fixed facts are computed once per node shape (nodes with equal labels but the hostname, equal
taints: :class:`~gpuplane.k8s.node_shapes.NodeShapes`) and kept as per-node id arrays, and the
free amounts are read as matrix slices; a pod's causes then cost numpy passes over its node
indexes plus one step per distinct answer, not one Python step per node.

Every memo lives in ``ClusterIndex.cache``, which ``add_node`` (simulate's autoscaler) clears;
pod changes (``assume`` / ``forget``) move only the matrices, which are read afresh each time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuplane.gpu.labels import MIG_STRATEGY
from gpuplane.gpu.resources import classify, is_gpu_resource
from gpuplane.gpu.sharing import REPLICA_ADJECTIVE, Replication, replication

if TYPE_CHECKING:
    from gpuplane.scheduler.index import ClusterIndex
    from gpuplane.scheduler.scheduler import Scheduler

# Below this magnitude an int64 matrix entry is the node's exact amount (the index saturates
# amounts beyond int64, as Quantity.Value does), and the causes print exact amounts.
_EXACT = 2**62
_KINDS = "why-pending/kinds"
_EXPOSED = "why-pending/exposed"
_MIG_SINGLE = "why-pending/mig-single"


def names_of(sched: Scheduler, ids: np.ndarray, limit: int | None = None) -> list[str]:
    """The names of nodes ``ids`` (the first ``limit`` of them), in order."""
    return sched.node_names()[ids[:limit] if limit is not None else ids].tolist()


def amounts(index: ClusterIndex, resource: str, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(allocatable, requested) of ``resource`` on nodes ``ids``, as ``NodeInfo`` holds them.

    The index's matrix rows when every entry there is exact; else Python ints from the nodes'
    dicts (an object array), so a saturated 2**63 never prints as another number."""
    row = index.resource_index.get(resource)
    if row is None:
        zeros = np.zeros(len(ids), dtype=np.int64)
        return zeros, zeros
    alloc, req = index.alloc[row], index.req[row]
    # Sums over all nodes and differences stay exact too: the bound is shared among the nodes.
    if not len(alloc) or _peak(alloc, req) * (len(alloc) + 1) < _EXACT:
        return alloc[ids], req[ids]
    infos = index.node_infos
    return (
        np.array([infos[j].allocatable.get(resource, 0) for j in ids.tolist()], dtype=object),
        np.array([infos[j].requested.get(resource, 0) for j in ids.tolist()], dtype=object),
    )


def _peak(*rows: np.ndarray) -> int:
    """The largest magnitude in ``rows`` (as Python ints: -(-2**63) does not fit an int64)."""
    return max(max(int(row.max()), -int(row.min())) for row in rows)


class _PerShape:
    """A per-node id array filled lazily, once per node shape: ``values[ids[j]]`` is node j's
    answer (-1 in ``ids``: not asked yet). Valid only for answers that read a node's labels
    but not its hostname, or its taints: what nodes of one shape share."""

    __slots__ = ("_by_key", "_by_shape", "ids", "values")

    def __init__(self, num_nodes: int) -> None:
        self.ids = np.full(num_nodes, -1, dtype=np.int64)
        self.values: list[Any] = []
        self._by_key: dict[Hashable, int] = {}
        self._by_shape: dict[int, int] = {}

    def lookup(self, index: ClusterIndex, nodes: np.ndarray, answer: Callable[[int], Hashable]) -> np.ndarray:
        """The ids of ``nodes``' answers, computing ``answer(j)`` for one node of each shape
        not asked yet."""
        found = self.ids[nodes]
        if (found < 0).any():
            shape_of = index.shapes.shape_of
            for j in nodes[found < 0].tolist():
                sid = shape_of[j]
                vid = self._by_shape.get(sid)
                if vid is None:
                    value = answer(j)
                    vid = self._by_key.get(value)
                    if vid is None:
                        vid = self._by_key[value] = len(self.values)
                        self.values.append(value)
                    self._by_shape[sid] = vid
                self.ids[j] = vid
            found = self.ids[nodes]
        return found


def node_kinds(sched: Scheduler, resource: str, nodes: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Per node of ``nodes``: an id into the returned list of ``(Replication | None, kind)``: how
    ``resource`` is shared there (gpu/sharing.py) and the node's kind as a shortage cause names
    it (its GPU model, after the sharing adjective). Both read labels only: once per shape."""
    index = sched.index
    memo: dict[str, _PerShape] = index.cache.setdefault(_KINDS, {})
    table = memo.get(resource)
    if table is None:
        table = memo[resource] = _PerShape(index.num_nodes)

    def answer(j: int) -> tuple[Replication | None, str]:
        labels = index.node_infos[j].labels
        rep = replication(labels, resource)
        model = _model(labels)
        if rep is not None:
            model = f"{REPLICA_ADJECTIVE.get(rep.strategy, rep.strategy)} {model}".rstrip()
        return rep, model

    return table.lookup(index, nodes, answer), table.values


def _model(labels: dict[str, str]) -> str:
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    try:
        model = catalog().model_for_node_labels(labels)
    except (OSError, ValueError, KeyError):
        model = None
    return model.name if model is not None else ""


class Exposed:
    """The GPU names each node advertises (allocatable > 0) besides one resource, split by kind:
    ``mig[j]`` / ``shared[j]`` index ``names`` (tuples of MIG / time-sliced names, sorted; -1:
    none). Allocatable changes only when a node is added, so this is built once per resource."""

    __slots__ = ("mig", "names", "shared")

    def __init__(self, index: ClusterIndex, resource: str) -> None:
        rows = sorted(
            (name, row)
            for name, row in index.resource_index.items()
            if name != resource and is_gpu_resource(name)
        )
        self.names: list[tuple[str, ...]] = []
        ids: dict[tuple[str, ...], int] = {}
        self.mig = np.full(index.num_nodes, -1, dtype=np.int64)
        self.shared = np.full(index.num_nodes, -1, dtype=np.int64)
        if not rows or not index.num_nodes:
            return
        positive = index.alloc[[row for _, row in rows]] > 0
        patterns, inverse = np.unique(positive, axis=1, return_inverse=True)
        inverse = inverse.reshape(-1)
        for p in range(patterns.shape[1]):
            advertised = [rows[r][0] for r in np.flatnonzero(patterns[:, p]).tolist()]
            members = inverse == p
            for kind, out in (("mig", self.mig), ("shared", self.shared)):
                picked = tuple(n for n in advertised if (c := classify(n)) is not None and c.kind == kind)
                if picked:
                    out[members] = ids.setdefault(picked, len(ids))
        self.names = list(ids)


def exposed(sched: Scheduler, resource: str) -> Exposed:
    """:class:`Exposed` for ``resource``, once per run."""
    memo: dict[str, Exposed] = sched.index.cache.setdefault(_EXPOSED, {})
    found = memo.get(resource)
    if found is None:
        found = memo[resource] = Exposed(sched.index, resource)
    return found


def mig_single(sched: Scheduler) -> np.ndarray:
    """Per node: labelled with the MIG ``single`` strategy (what ``unit_word`` asks)."""
    found = sched.index.cache.get(_MIG_SINGLE)
    if found is None:
        found = sched.index.cache[_MIG_SINGLE] = np.array(
            [info.labels.get(MIG_STRATEGY) == "single" for info in sched.index.node_infos], dtype=bool
        )
    return found


def first_seen(keys: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``[(key, positions)]``: the distinct integer ``keys`` in the order a walk meets them
    first, each with its positions (ascending): what ``dict.setdefault(key, []).append`` over
    a walk builds."""
    if not len(keys):
        return []
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(uniq)))
    out: list[tuple[int, np.ndarray]] = []
    for u in np.argsort(first, kind="stable").tolist():
        start = int(bounds[u - 1]) if u else 0
        out.append((int(uniq[u]), order[start : int(bounds[u])]))
    return out
