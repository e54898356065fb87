"""The ``--cluster`` nodes as lint's cluster-context rules ask about them: per node shape, never per node.

Why: diagnose lints every workload of a cluster, and a rule that asked "which nodes may this pod
use, and do they tolerate it / advertise its MIG slice / carry its GPU model" by walking every node
for every pod set cost pod sets x nodes. A node's answer to such a question depends only on what the
question reads of it: the labels the pod's node selection reads (its nodeSelector keys and the keys
of its required node affinity; the name when a ``matchFields`` term reads it), the labels the rule
itself reads (its ``reads``), the taints and the advertised resources. Nodes equal in all of that
form one shape (:class:`gpuplane.k8s.node_shapes.NodeShapes`, keyed by that projection), so each
distinct question is asked once per shape: thousands of nodes of a few pools give a few dozen
shapes, and a label unique to each node that the question does not read (the hostname, GPU Feature
Discovery's ``nvidia.com/gfd.timestamp``, an instance id) does not split them.

The shapes of one set of read labels are built once per run, in one walk of the nodes. A rule reads
of a shape's representative node only what the key holds; counts and names come from ``members``.
Tests compare every answer with ``by_node=True`` (each node its own shape: the walk of every node)
on random clusters.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING

from gpuplane.gpu.requests import is_accelerator_resource
from gpuplane.k8s.node_shapes import NodeShapes
from gpuplane.k8s.selectors import (
    node_selection_key,
    node_selection_reads,
    pod_matches_required_node_affinity,
)

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.k8s.objects import Node, Pod


class ClusterNodes:
    """The cluster's nodes grouped for the node questions of one lint run.

    ``visited`` counts the node-selection matches made (one per shape and distinct selection):
    tests assert it instead of a time.
    """

    def __init__(self, cluster: ClusterState, *, by_node: bool = False) -> None:
        self.cluster = cluster
        self.nodes: list[Node] = cluster.nodes
        self.by_node = by_node
        self._shapes: dict[tuple[frozenset[str], bool], NodeShapes] = {}
        self._selected: dict[bytes, tuple[NodeShapes, list[int]]] = {}
        self._free: list[dict[str, int]] | None = None
        self._facts: dict[int, int] | None = None
        self.visited = 0

    def shapes(self, reads: Iterable[str] = (), *, name: bool = False) -> NodeShapes:
        """The nodes grouped by the labels ``reads`` (and the name, with ``name``), the taints (key,
        value, effect) and the resources (names in capacity and allocatable, and allocatable as the
        cluster model parses it): built on first use, in one walk of the nodes."""
        labels = frozenset(reads)
        found = self._shapes.get((labels, name))
        if found is None:
            found = self._shapes[(labels, name)] = NodeShapes(self.nodes, key=self._key(labels, name))
        return found

    def _key(self, labels: frozenset[str], name: bool) -> Callable[[Node], Hashable]:
        label_keys = tuple(sorted(labels))
        facts, by_node = self._node_facts(), self.by_node

        def key(node: Node) -> Hashable:
            meta = node.metadata
            node_labels = meta.labels
            return (
                id(node) if by_node else facts[id(node)],
                meta.name if name else None,
                tuple([node_labels.get(k) for k in label_keys]),
            )

        return key

    def _node_facts(self) -> dict[int, int]:
        """Node (by id) -> the number of its taints (key, value, effect) and resources (names in
        capacity and allocatable, allocatable as the cluster model parses it) among the distinct
        ones: the part of every shape key that reads no label, computed once per run."""
        found = self._facts
        if found is None:
            distinct: dict[Hashable, int] = {}
            allocatable = self.cluster.allocatable
            found = self._facts = {}
            for node in self.nodes:
                status = node.status
                fact = (
                    tuple([(t.key, t.value, t.effect) for t in node.spec.taints]),
                    frozenset(status.allocatable),
                    frozenset(status.capacity),
                    tuple(sorted(allocatable(node.metadata.name).items())),
                )
                found[id(node)] = distinct.setdefault(fact, len(distinct))
        return found

    def reps(self, shapes: NodeShapes) -> list[Node]:
        """The representative (first) node of each shape, in shape order."""
        return [self.nodes[i] for i in shapes.reps]

    def selected(self, pod: Pod, reads: Iterable[str] = ()) -> tuple[NodeShapes, list[int]]:
        """The shapes (of the labels ``pod``'s node selection reads plus ``reads``) whose nodes the
        pod's nodeSelector and required node affinity match, as kube-scheduler's NodeAffinity filter
        does; ascending. One match per shape, remembered per distinct node selection."""
        extra = tuple(sorted(set(reads)))
        key = node_selection_key(pod) + repr(extra).encode()
        found = self._selected.get(key)
        if found is None:
            keys, name = node_selection_reads(pod)
            shapes = self.shapes(keys | set(extra), name=name)
            self.visited += len(shapes)
            found = self._selected[key] = (
                shapes,
                [
                    s
                    for s, rep in enumerate(shapes.reps)
                    if pod_matches_required_node_affinity(pod, self.nodes[rep])
                ],
            )
        return found

    def names(self, shapes: NodeShapes, chosen: Iterable[int], limit: int) -> list[str]:
        """The names of the first ``limit`` nodes (in snapshot order) of the shapes ``chosen``."""
        first = sorted(i for s in chosen for i in shapes.members[s][:limit])
        return [self.nodes[i].metadata.name for i in first[:limit]]

    def count(self, shapes: NodeShapes, chosen: Iterable[int]) -> int:
        """How many nodes the shapes ``chosen`` hold."""
        return sum(len(shapes.members[s]) for s in chosen)

    def has_free(self, need: dict[str, int]) -> bool:
        """Whether some node has ``need`` free (``ClusterState.free``: allocatable minus the requests
        of its pods); every name must be an accelerator resource. Asked of the distinct free
        accelerator counts, collected in one walk of the nodes."""
        if not all(is_accelerator_resource(name) for name in need):
            raise ValueError("has_free answers for accelerator resources only")
        vectors = self._free
        if vectors is None:
            distinct = {
                tuple(
                    sorted(
                        (n, v)
                        for n, v in self.cluster.free(node.metadata.name).items()
                        if is_accelerator_resource(n)
                    )
                )
                for node in self.nodes
            }
            vectors = self._free = [dict(vector) for vector in distinct]
        return any(all(free.get(name, 0) >= count for name, count in need.items()) for free in vectors)
