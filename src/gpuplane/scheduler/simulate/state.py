"""The cluster as the simulation changes it: bind, forget (pod finished or evicted), add node.

Why here: :class:`gpuplane.scheduler.scheduler.Scheduler` indexes one snapshot and offers
``assume(pod, node)``; a simulation also removes pods (jobs complete, preemption victims,
rolled-back gangs) and adds nodes (autoscalers). Those two operations are the exact inverse /
extension of what ``ClusterIndex`` builds (NodeInfo lists, the resources x nodes matrices,
the static node classes), so they are done here on the simulation's own copy of the cluster
(``ClusterState`` itself is treated as read-only). Every change bumps ``version`` so callers
can cache "this pod shape does not fit" until the cluster changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpuplane.k8s.cluster import ClusterState, parse_resource_list
from gpuplane.k8s.objects import Node, Pod
from gpuplane.k8s.requests import pod_requests
from gpuplane.scheduler.framework import FitError, NodeInfo, ScheduleResult
from gpuplane.scheduler.plugins.node_ports import pod_host_ports
from gpuplane.scheduler.preemption import PreemptionOutcome, run_postfilter
from gpuplane.scheduler.scheduler import Scheduler

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.placer import FastPlacer

PODS = "pods"


def _requests(pod: Pod) -> dict[str, int]:
    try:
        return pod_requests(pod)
    except (ValueError, TypeError):
        return {}


class SimCluster:
    """A private, mutable copy of the cluster with the kube-scheduler model over it."""

    def __init__(self, cluster: ClusterState, version: str | None = None, *, fast: bool = True) -> None:
        # A shallow copy: the node/pod lists and per-node dicts the simulation changes are ours.
        state = ClusterState(
            list(cluster.nodes),
            list(cluster.pods),
            list(cluster.objects),
            server_version=cluster.server_version,
            source=cluster.source,
        )
        self.state = state
        self.sched = Scheduler(state, version=version)
        self.version = 0
        self.released = 0  # bumps only when resources are freed or added (forget, add_node)
        self.placer: FastPlacer | None = None
        if fast:
            from gpuplane.scheduler.simulate.placer import FastPlacer

            self.placer = FastPlacer(self)

    # -- queries ---------------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return self.sched.index.num_nodes

    def gpu_total(self, resource: str) -> int:
        row = self.sched.index.resource_index.get(resource)
        return int(self.sched.index.alloc[row].sum()) if row is not None else 0

    def gpu_allocated(self, resource: str) -> int:
        row = self.sched.index.resource_index.get(resource)
        return int(self.sched.index.req[row].sum()) if row is not None else 0

    # -- scheduling ------------------------------------------------------------------------

    def schedule(self, pod: Pod) -> ScheduleResult | FitError:
        """One scheduling cycle (fast path when the pod only needs class-level filters)."""
        if self.placer is not None:
            return self.placer.schedule(pod)
        return self.sched.schedule_one(pod)

    def preempt(self, pod: Pod) -> tuple[FitError, PreemptionOutcome | None]:
        """The FitError of a pod that did not fit, and DefaultPreemption's outcome
        (``nominated_node`` + victims when evicting lower-priority pods makes room)."""
        sched = self.sched
        if sched.index.num_nodes == 0:
            return FitError(num_all_nodes=0, groups=[]), None
        ctx = sched.context(pod)
        diag = sched.framework.run(ctx, sched._nominated_extra(ctx))
        if diag.error:
            return FitError(num_all_nodes=sched.index.num_nodes, groups=[], prefilter_msg=diag.error), None
        fit = sched.fit_error(ctx, diag)
        if len(diag.feasible):
            # fits after all (the cluster changed since the failing cycle): no preemption needed
            return fit, None
        outcome = run_postfilter(sched.framework, ctx, diag, ctx.state.get("_active_plugins", []))
        fit.postfilter_msg = outcome.message
        return fit, outcome

    # -- changes ---------------------------------------------------------------------------

    def bind(self, pod: Pod, node: str) -> None:
        """Place ``pod`` on ``node`` (Scheduler.assume) and refresh that node's class."""
        self.sched.assume(pod, node)
        self.version += 1
        if self.placer is not None:
            self.placer.node_changed(self.sched.index.by_name[node])

    def forget(self, pod: Pod, node: str) -> None:
        """Remove ``pod`` from ``node``: the inverse of ``Scheduler.assume``."""
        index = self.sched.index
        j = index.by_name[node]
        info = index.node_infos[j]
        kept = [p for p in info.pods if p is not pod]
        if len(kept) == len(info.pods):
            return
        info.pods = kept
        new_requested = dict(info.requested)
        for name, amount in _requests(pod).items():
            new_requested[name] = new_requested.get(name, 0) - amount
            row = index.resource_index.get(name)
            if row is not None:
                index.req[row, j] -= amount
        new_requested[PODS] = new_requested.get(PODS, 0) - 1
        index.req[index.resource_index[PODS], j] -= 1
        info.requested = new_requested
        used: set = set()
        for other in kept:
            used.update(pod_host_ports(other))
        info.used_ports = used
        index._anti_affinity_pods = None
        index._priority_levels = None
        index._requests_cache.pop(id(pod), None)
        self.version += 1
        self.released += 1
        if self.placer is not None:
            self.placer.node_changed(j)

    def add_node(self, node: Node) -> None:
        """A new node (autoscaler): extend NodeInfos, matrices and static classes."""
        state = self.state
        index = self.sched.index
        name = node.metadata.name
        state.nodes.append(node)
        state.node_by_name[name] = node
        allocatable = parse_resource_list(node.status.allocatable)
        j = index.num_nodes
        info = NodeInfo(index=j, name=name, node=node, pods=[], allocatable=allocatable, requested={PODS: 0})
        index.node_infos.append(info)
        index.by_name[name] = j
        index.num_nodes = j + 1
        for res in allocatable:
            if res not in index.resource_index:
                index.resource_index[res] = len(index.resource_index)
                index.alloc = np.vstack([index.alloc, np.zeros((1, j), dtype=np.int64)])
                index.req = np.vstack([index.req, np.zeros((1, j), dtype=np.int64)])
        column = np.zeros((len(index.resource_index), 1), dtype=np.int64)
        for res, amount in allocatable.items():
            column[index.resource_index[res], 0] = amount
        index.alloc = np.hstack([index.alloc, column])
        index.req = np.hstack([index.req, np.zeros_like(column)])
        index._build_classes()
        index.cache.clear()
        index._anti_affinity_pods = None
        index._priority_levels = None
        self.version += 1
        self.released += 1
        if self.placer is not None:
            self.placer.rebuild()
