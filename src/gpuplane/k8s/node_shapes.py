"""Node shapes: nodes that answer a question alike because they differ only in what it does not read.

Why: on a cluster of a few pools, thousands of nodes give a few dozen distinct answers to "does
this pod's node selection match", "does it tolerate the taints", "which MIG strategy runs here".
Grouping the nodes once lets each question be asked once per shape instead of once per node, so
the cost of a question no longer grows with the nodes of a pool.

The default key is the scheduler's (topology spread's node inclusion policies and its "does the
node carry every topology key" test read a node's labels and taints only): two nodes share a shape
when their labels other than ``kubernetes.io/hostname`` are equal, both have or both lack that
label, and their taints are equal. A question that names nodes (a nodeSelector on the hostname, a
``matchFields`` term) must still be asked per node: :func:`selects_node_identity`. Other callers
(lint's cluster-context rules) pass the key of what their questions read.

Shared by the scheduler model and lint, which sit side by side above ``k8s``, so it lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from gpuplane.k8s.objects import Node, Pod
from gpuplane.k8s.selectors import node_selection_reads

HOSTNAME_LABEL = "kubernetes.io/hostname"


def identity_free_key(node: Node) -> tuple[Hashable, ...]:
    """The scheduler's shape key: labels but the hostname, whether the hostname label is set, taints."""
    labels = node.metadata.labels
    return (
        frozenset(item for item in labels.items() if item[0] != HOSTNAME_LABEL),
        HOSTNAME_LABEL in labels,
        tuple((t.key, t.value, t.effect) for t in node.spec.taints),
    )


class NodeShapes:
    """``shape_of[j]`` is node ``j``'s shape; ``members[s]`` its nodes (ascending), ``reps[s]`` the
    first of them, ``hostnames[s]`` their hostname label values (each mapped to 0, ready to seed
    per-domain counts). Shapes are numbered in the order of their first node, so walking them in
    order meets every answer in the order a walk of the nodes would."""

    __slots__ = ("_ids", "_key", "hostnames", "members", "reps", "shape_of")

    def __init__(
        self, nodes: Iterable[Node] = (), key: Callable[[Node], Hashable] = identity_free_key
    ) -> None:
        self._key = key
        self._ids: dict[Hashable, int] = {}
        self.shape_of: list[int] = []
        self.reps: list[int] = []
        self.members: list[list[int]] = []
        self.hostnames: list[dict[str, int]] = []
        for node in nodes:
            self.add(node)

    def add(self, node: Node) -> int:
        """Append ``node`` as node ``len(shape_of)`` (nodes are added in index order); its shape."""
        index = len(self.shape_of)
        key = self._key(node)
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self.reps)
            self.reps.append(index)
            self.members.append([])
            self.hostnames.append({})
        self.shape_of.append(sid)
        self.members[sid].append(index)
        hostname = node.metadata.labels.get(HOSTNAME_LABEL)
        if hostname is not None:
            self.hostnames[sid].setdefault(hostname, 0)
        return sid

    def __len__(self) -> int:
        return len(self.reps)


def selects_node_identity(pod: Pod) -> bool:
    """Whether the pod's nodeSelector or required node affinity reads a node's hostname label or
    its name (``matchFields``), so nodes of one shape may answer differently."""
    keys, reads_name = node_selection_reads(pod)
    return reads_name or HOSTNAME_LABEL in keys
