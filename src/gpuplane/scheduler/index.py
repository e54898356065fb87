"""The cluster, indexed once for scheduling: NodeInfos, resource matrices, node classes.

Why: explaining 2,000 Pending pods on 5,000 nodes must not redo per-node work per pod
(design.md "Fast by construction"). Everything here is computed once per ClusterState:
- ``NodeInfo`` per node (pods, requested, used host ports), like the scheduler's snapshot;
- a resources x nodes matrix of allocatable and requested (numpy), so NodeResourcesFit
  is a vector comparison;
- *static node classes*: nodes with equal taints, cordon flag and labels (ignoring the
  unique hostname label) get the same verdict from every static plugin, which is then
  evaluated once per class, not per node;
- *node shapes* (:class:`NodeShapes`): nodes with equal labels except the hostname and equal
  taints, for the questions that read only those (topology spread's node inclusion);
- the pods on nodes by namespace and label (:class:`PodIndex`), for every selector question;
- pod priorities (PriorityClass resolution) and the nominated pods.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any

import numpy as np

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.node_shapes import NodeShapes
from gpuplane.k8s.objects import Node, Pod
from gpuplane.k8s.quantity import saturate_int64
from gpuplane.k8s.requests import pod_requests
from gpuplane.scheduler.framework import NodeInfo
from gpuplane.scheduler.plugins.inter_pod_affinity import COUNTS_CACHE as INTER_POD_AFFINITY_COUNTS
from gpuplane.scheduler.plugins.inter_pod_affinity import ExistingAntiAffinity
from gpuplane.scheduler.plugins.node_ports import pod_host_ports
from gpuplane.scheduler.pod_index import PodIndex

HOSTNAME_LABEL = "kubernetes.io/hostname"
PODS = "pods"
# pkg/apis/scheduling/types.go: the priority of a pod without any PriorityClass.
DEFAULT_PRIORITY = 0


class ClusterIndex:
    """Per-node state computed once from a :class:`ClusterState` (see module docstring)."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        # Per-cluster results a plugin computes once on first use (e.g. CSINode limits).
        self.cache: dict[Any, Any] = {}
        # Bumped by every change of the pods on nodes or of the node set (``pods_changed``), so
        # what is remembered outside the index (an explaining session's evaluations) knows.
        self.generation = 0
        self.node_infos: list[NodeInfo] = []
        self.by_name: dict[str, int] = {}
        self.pods = PodIndex()
        for i, node in enumerate(cluster.nodes):
            name = node.metadata.name
            pods = cluster.pods_by_node.get(name, [])
            info = NodeInfo(
                index=i,
                name=name,
                node=node,
                pods=pods,
                allocatable=cluster.allocatable(name),
                requested=cluster.requested(name),
            )
            for pod in pods:
                if pod.spec.containers and any(c.ports for c in pod.spec.containers):
                    info.used_ports.update(pod_host_ports(pod))
                self.pods.add(pod, i)
            self.node_infos.append(info)
            self.by_name[name] = i
        self.num_nodes = len(self.node_infos)
        self._build_resources()
        self._build_classes()
        self.shapes = NodeShapes(info.node for info in self.node_infos)
        self._priority_default = self._global_default_priority()
        self._namespace_labels: dict[str, dict[str, str]] = {
            name: dict(obj.labels) for name, obj in cluster.namespaces.items()
        }
        self.nominated: list[tuple[Pod, int]] = [
            (pod, self.by_name[pod.status.nominated_node_name])
            for pod in cluster.pending_pods
            if pod.status.nominated_node_name in self.by_name
        ]
        self._anti_affinity: ExistingAntiAffinity | None = None
        # DefaultPreemption's step one, per priority level (``below_priority``).
        self._by_priority: dict[int, list[tuple[int, Pod]]] | None = None
        self._priority_values: list[int] = []
        self._below: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._requests_cache: dict[int, dict[str, int]] = {}
        self._spec_requests: dict[int, tuple[Any, dict[str, int]]] = {}

    # -- resources -----------------------------------------------------------------------

    def _build_resources(self) -> None:
        names: dict[str, int] = {}
        for info in self.node_infos:
            for name in info.allocatable:
                if name not in names:
                    names[name] = len(names)
            for name in info.requested:
                if name not in names:
                    names[name] = len(names)
        names.setdefault(PODS, len(names))
        self.resource_index = names
        n = self.num_nodes
        alloc = np.zeros((len(names), n), dtype=np.int64)
        req = np.zeros((len(names), n), dtype=np.int64)
        saturated = False
        for j, info in enumerate(self.node_infos):
            # Each amount is an int64 already (Quantity.Value saturates); a node's requested
            # sum of several saturated pods may not be, so it is clamped the same way.
            for name, amount in info.allocatable.items():
                alloc[names[name], j] = saturate_int64(amount)
            for name, amount in info.requested.items():
                req[names[name], j] = clamped = saturate_int64(amount)
                saturated = saturated or clamped != amount
        self.alloc = alloc
        self.req = req
        # True when some node's requests overflow int64: ``req`` is then no longer the sum.
        self._req_saturated = saturated

    # -- static node classes ---------------------------------------------------------------

    @staticmethod
    def _class_key(info: NodeInfo) -> tuple[Any, ...]:
        spec = info.node.spec
        labels = info.node.metadata.labels
        return (
            spec.unschedulable,
            tuple((t.key, t.value, t.effect) for t in spec.taints),
            frozenset(item for item in labels.items() if item[0] != HOSTNAME_LABEL),
        )

    def _build_classes(self) -> None:
        self._class_keys: dict[Any, int] = {}
        self.class_ids = np.empty(self.num_nodes, dtype=np.int32)
        self.class_reps: list[int] = []
        for j, info in enumerate(self.node_infos):
            self.class_ids[j] = self._class_of(j, info)

    def _class_of(self, j: int, info: NodeInfo) -> int:
        key = self._class_key(info)
        cid = self._class_keys.get(key)
        if cid is None:
            cid = self._class_keys[key] = len(self.class_reps)
            self.class_reps.append(j)
        return cid

    def label_domains(self, key: str) -> tuple[np.ndarray, dict[str, int]]:
        """Per node, the position of its ``key`` label's value among the values nodes carry (-1:
        no such label), and those positions by value; built once per key (topology spread's
        Filter reads it for every Pending pod; node labels change only by adding a node, which
        clears the cache)."""
        cache: dict[str, tuple[np.ndarray, dict[str, int]]] = self.cache.setdefault("label-domains", {})
        hit = cache.get(key)
        if hit is None:
            positions: dict[str, int] = {}
            ids = np.full(self.num_nodes, -1, dtype=np.int64)
            for info in self.node_infos:
                value = info.labels.get(key)
                if value is not None:
                    ids[info.index] = positions.setdefault(value, len(positions))
            hit = cache[key] = (ids, positions)
        return hit

    # -- changes (simulate) ----------------------------------------------------------------
    # A simulation places pods, removes them and adds nodes one at a time; these keep every
    # structure above exactly as a fresh ClusterIndex over the changed cluster would build it
    # (tests/scheduler and tests/simulate compare against one).

    def resource_row_for(self, name: str) -> int:
        """The matrix row of ``name``, adding an all-zero row when no node had it yet."""
        row = self.resource_index.get(name)
        if row is None:
            row = self.resource_index[name] = len(self.resource_index)
            zeros = np.zeros((1, self.num_nodes), dtype=np.int64)
            self.alloc = np.vstack([self.alloc, zeros])
            self.req = np.vstack([self.req, zeros])
        return row

    def add_pod(self, j: int, pod: Pod) -> None:
        """Count ``pod`` on node ``j``: NodeInfo pods / requested / ports and the matrix column."""
        info = self.node_infos[j]
        info.pods = [*info.pods, pod]
        requests = self.pod_requests(pod)
        new_requested = dict(info.requested)
        req = self.req
        for name, amount in requests.items():
            new_requested[name] = new_requested.get(name, 0) + amount
            row = self.resource_index.get(name)
            if row is None:
                row = self.resource_row_for(name)
                req = self.req
            req[row, j] += amount
        new_requested[PODS] = new_requested.get(PODS, 0) + 1
        req[self.resource_index[PODS], j] += 1
        info.requested = new_requested
        ports = pod_host_ports(pod)
        if ports:
            info.used_ports = info.used_ports | set(ports)
        self.pods.add(pod, j)
        if self._anti_affinity is not None:
            self._anti_affinity.add(pod, j)
        self.pods_changed()

    def remove_pod(self, j: int, pod: Pod) -> bool:
        """The inverse of :meth:`add_pod` (the pod finished or was evicted); False if absent."""
        info = self.node_infos[j]
        kept = [p for p in info.pods if p is not pod]
        if len(kept) == len(info.pods):
            return False
        info.pods = kept
        new_requested = dict(info.requested)
        for name, amount in self.pod_requests(pod).items():
            new_requested[name] = new_requested.get(name, 0) - amount
            row = self.resource_index.get(name)
            if row is not None:
                self.req[row, j] -= amount
        new_requested[PODS] = new_requested.get(PODS, 0) - 1
        self.req[self.resource_index[PODS], j] -= 1
        info.requested = new_requested
        used: set[Any] = set()
        for other in kept:
            used.update(pod_host_ports(other))
        info.used_ports = used
        self._requests_cache.pop(id(pod), None)
        self.pods.remove(pod, j)
        if self._anti_affinity is not None:
            self._anti_affinity.remove(pod, j)
        self.pods_changed()
        return True

    def add_node(self, node: Node) -> int:
        """Index a new, empty node (autoscaler): NodeInfo, matrix column, static class."""
        from gpuplane.k8s.cluster import parse_resource_list  # deferred for start-up time

        name = node.metadata.name
        allocatable = parse_resource_list(node.status.allocatable)
        j = self.num_nodes
        info = NodeInfo(index=j, name=name, node=node, pods=[], allocatable=allocatable, requested={PODS: 0})
        for res in allocatable:
            self.resource_row_for(res)
        column = np.zeros((len(self.resource_index), 1), dtype=np.int64)
        for res, amount in allocatable.items():
            column[self.resource_index[res], 0] = amount
        self.alloc = np.hstack([self.alloc, column])
        self.req = np.hstack([self.req, np.zeros_like(column)])
        self.node_infos.append(info)
        self.by_name[name] = j
        self.num_nodes = j + 1
        self.class_ids = np.append(self.class_ids, np.int32(self._class_of(j, info)))
        self.shapes.add(info.node)
        # Per-cluster plugin results (CSINode limits, ...) and priority tables include the node set.
        self.cache.clear()
        self.pods_changed()
        return j

    def pods_changed(self) -> None:
        """Drop what is derived from the pods on nodes (priority tables, preemption's per-node
        memo); the pod index and the anti-affinity terms are updated in place instead."""
        self.generation += 1
        self._by_priority = None
        self._below = {}
        self.cache.pop("preemption/lower", None)
        self.cache.pop("preemption/lower-set", None)
        self.cache.pop("preemption/lower-pack", None)
        self.cache.pop(INTER_POD_AFFINITY_COUNTS, None)

    # -- priorities ------------------------------------------------------------------------

    def _global_default_priority(self) -> int:
        for obj in self.cluster.priority_classes.values():
            if obj.data.get("globalDefault") is True:
                return _int(obj.data.get("value"))
        return DEFAULT_PRIORITY

    def priority(self, pod: Pod) -> int:
        """``corev1helpers.PodPriority``: ``spec.priority``, set by the Priority admission
        plugin from ``priorityClassName`` (or the globalDefault class) at creation; resolved
        here too for manifests that never went through admission."""
        if pod.spec.priority is not None:
            return pod.spec.priority
        name = pod.spec.priority_class_name
        if name:
            obj = self.cluster.priority_classes.get(name)
            if obj is not None:
                return _int(obj.data.get("value"))
            if name == "system-node-critical":
                return 2000001000
            if name == "system-cluster-critical":
                return 2000000000
        return self._priority_default

    def preemption_policy(self, pod: Pod) -> str:
        if pod.spec.preemption_policy:
            return pod.spec.preemption_policy
        obj = self.cluster.priority_classes.get(pod.spec.priority_class_name or "")
        if obj is not None and obj.data.get("preemptionPolicy"):
            return str(obj.data["preemptionPolicy"])
        return "PreemptLowerPriority"

    def below_priority(self, priority: int) -> tuple[int, np.ndarray, np.ndarray]:
        """What DefaultPreemption's step one removes from every node: ``(level, freed, count)``,
        the summed requests (resources x nodes, the ``pods`` row one per pod) and the number of
        the pods whose priority is strictly below ``priority``; ``level`` counts the distinct
        pod priorities below it, so equal levels remove the same pods (a memo key).

        Memoized per level. Whichever side of ``priority`` holds fewer pods is summed: the pods
        at or above it, usually few, are taken off ``req``, which is exact as int64 arithmetic
        wraps alike both ways; not when a node's sum saturated (``saturate_int64``), then the
        pods below are summed."""
        by_level = self._pods_by_priority()
        levels = self._priority_values
        level = bisect.bisect_left(levels, priority)
        hit = self._below.get(level)
        if hit is not None:
            return level, hit[0], hit[1]
        below = sum(len(by_level[p]) for p in levels[:level])
        above = sum(len(by_level[p]) for p in levels[level:])
        if above < below and not self._req_saturated:
            freed = self.req.copy()
            count = np.array([len(info.pods) for info in self.node_infos], dtype=np.int64)
            self._add_requests(freed, count, (by_level[p] for p in levels[level:]), -1)
        else:
            freed = np.zeros_like(self.req)
            count = np.zeros(self.num_nodes, dtype=np.int64)
            self._add_requests(freed, count, (by_level[p] for p in levels[:level]), 1)
        self._below[level] = (freed, count)
        return level, freed, count

    def _pods_by_priority(self) -> dict[int, list[tuple[int, Pod]]]:
        """The pods on nodes by priority, each with its node index, in node order."""
        if self._by_priority is None:
            by_level: dict[int, list[tuple[int, Pod]]] = {}
            for info in self.node_infos:
                for pod in info.pods:
                    by_level.setdefault(self.priority(pod), []).append((info.index, pod))
            self._by_priority = by_level
            self._priority_values = sorted(by_level)
            self._below = {}
        return self._by_priority

    def _add_requests(
        self, freed: np.ndarray, count: np.ndarray, groups: Iterable[list[tuple[int, Pod]]], sign: int
    ) -> None:
        rows = self.resource_index
        pods_row = rows[PODS]
        for group in groups:
            for j, pod in group:
                for name, amount in self.pod_requests(pod).items():
                    row = rows.get(name)
                    if row is not None:
                        freed[row, j] += sign * amount
                freed[pods_row, j] += sign
                count[j] += sign

    # -- pods ------------------------------------------------------------------------------

    def pod_requests(self, pod: Pod) -> dict[str, int]:
        """``pod_requests`` memoized per pod object (preemption asks for the same pods often),
        and per pod spec object: requests depend on the spec alone, and simulate's replicas
        share their template's spec (the spec is kept with the entry, so ids never alias)."""
        key = id(pod)
        cached = self._requests_cache.get(key)
        if cached is None:
            cached = self.cluster.summed_requests(pod)  # a pod on a node: summed at load
            if cached is not None:
                self._requests_cache[key] = cached
                return cached
            spec = pod.spec
            by_spec = self._spec_requests.get(id(spec))
            if by_spec is not None and by_spec[0] is spec:
                cached = by_spec[1]
            else:
                try:
                    cached = pod_requests(pod)
                except (ValueError, TypeError):
                    cached = {}
                self._spec_requests[id(spec)] = (spec, cached)
            self._requests_cache[key] = cached
        return cached

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return self._namespace_labels.get(namespace, {})

    def existing_anti_affinity(self) -> ExistingAntiAffinity:
        """The required anti-affinity terms of the pods on nodes (InterPodAffinity checks every
        incoming pod against them), built on first use and kept in step with the pods."""
        if self._anti_affinity is None:
            self._anti_affinity = ExistingAntiAffinity(self)
        return self._anti_affinity


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return DEFAULT_PRIORITY
