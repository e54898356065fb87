"""Node shapes: nodes that differ only in their identity (name, hostname label).

Why: topology spread's node inclusion policies (``nodeAffinityPolicy``, ``nodeTaintsPolicy``) and
its "does the node carry every topology key" test read a node's labels and taints only; on a
5,000-node cluster of a few pools there are a few dozen distinct answers, so each is computed
once per shape instead of once per node, for every Pending pod. Two nodes share a shape when
their labels other than ``kubernetes.io/hostname`` are equal, both have or both lack that label,
and their taints are equal. A question that names nodes (a nodeSelector on the hostname, a
``matchFields`` term) must still be asked per node: :func:`selects_node_identity`.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.framework import NodeInfo

HOSTNAME_LABEL = "kubernetes.io/hostname"


class NodeShapes:
    """``shape_of[j]`` is node ``j``'s shape; ``members[s]`` its nodes (ascending), ``reps[s]`` the
    first of them, ``hostnames[s]`` their hostname label values (each mapped to 0, ready to seed
    per-domain counts)."""

    __slots__ = ("_ids", "hostnames", "members", "reps", "shape_of")

    def __init__(self, infos: list[NodeInfo]) -> None:
        self._ids: dict[Any, int] = {}
        self.shape_of: list[int] = []
        self.reps: list[int] = []
        self.members: list[list[int]] = []
        self.hostnames: list[dict[str, int]] = []
        for info in infos:
            self.add(info)

    @staticmethod
    def key(info: NodeInfo) -> tuple[Any, ...]:
        labels = info.labels
        return (
            frozenset(item for item in labels.items() if item[0] != HOSTNAME_LABEL),
            HOSTNAME_LABEL in labels,
            tuple((t.key, t.value, t.effect) for t in info.node.spec.taints),
        )

    def add(self, info: NodeInfo) -> None:
        """Append node ``info.index`` (nodes are added in index order)."""
        key = self.key(info)
        sid = self._ids.get(key)
        if sid is None:
            sid = self._ids[key] = len(self.reps)
            self.reps.append(info.index)
            self.members.append([])
            self.hostnames.append({})
        self.shape_of.append(sid)
        self.members[sid].append(info.index)
        hostname = info.labels.get(HOSTNAME_LABEL)
        if hostname is not None:
            self.hostnames[sid].setdefault(hostname, 0)

    def __len__(self) -> int:
        return len(self.reps)


def selects_node_identity(pod: Pod) -> bool:
    """Whether the pod's nodeSelector or required node affinity reads a node's hostname label or
    its name (``matchFields``), so nodes of one shape may answer differently."""
    if HOSTNAME_LABEL in pod.spec.node_selector:
        return True
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    required = node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
    if required is None:
        return False
    for term in required.node_selector_terms:
        if term.match_fields:
            return True
        if any(req.key == HOSTNAME_LABEL for req in term.match_expressions):
            return True
    return False
