"""The cluster as the simulation changes it: bind, forget (pod finished or evicted), add node.

Why here: :class:`gpuplane.scheduler.scheduler.Scheduler` indexes one snapshot; its public
``assume`` / ``forget`` / ``add_node`` keep that index exact as pods come and go and
autoscalers add nodes. ``SimCluster`` owns the private copy of the cluster they change
(``ClusterState`` given by the caller stays untouched), keeps the fast placer's node classes
in step, and binds the PersistentVolumeClaims a placed pod waits for (``volumes.py``).
``released`` bumps when resources are freed or added, so callers can cache "this pod shape
does not fit" until then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node, Pod
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.plugins.pv_matching import pv_index
from gpuplane.scheduler.preemption import PreemptionOutcome
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.scheduler.simulate.volumes import bind_claims
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.placer import FastPlacer


class SimCluster:
    """A private, mutable copy of the cluster with the kube-scheduler model over it."""

    def __init__(
        self,
        cluster: ClusterState,
        version: str | None = None,
        *,
        fast: bool = True,
        objects: list[Manifest] | None = None,
        nodes: list[Node] | None = None,
    ) -> None:
        """``objects`` replace ``cluster.objects`` (the inputs applied on top of it, see
        ``inputs.py``); ``nodes`` join the cluster's nodes (a same-name node is replaced)."""
        node_list = list(cluster.nodes)
        if nodes:
            names = {n.metadata.name for n in nodes}
            node_list = [n for n in node_list if n.metadata.name not in names] + list(nodes)
        state = ClusterState(
            node_list,
            list(cluster.pods),
            list(cluster.objects if objects is None else objects),
            server_version=cluster.server_version,
            source=cluster.source,
        )
        self.state = state
        self.sched = Scheduler(state, version=version)
        self.version = 0
        self.released = 0  # bumps only when resources are freed or added (forget, add_node)
        # priority -> version of the last bind of a pod with that priority (preemption caching)
        self.bound_at: dict[int, int] = {}
        self.placer: FastPlacer | None = None
        if fast:
            from gpuplane.scheduler.simulate.placer import FastPlacer  # deferred for start-up time

            self.placer = FastPlacer(self)

    # -- queries ---------------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return self.sched.index.num_nodes

    # -- scheduling ------------------------------------------------------------------------

    def schedule(self, pod: Pod) -> ScheduleResult | FitError:
        """One scheduling cycle (fast path when the pod only needs class-level filters)."""
        if self.placer is not None:
            return self.placer.schedule(pod)
        return self.sched.schedule_one(pod)

    def schedule_or_preempt(self, pod: Pod) -> tuple[ScheduleResult | FitError, PreemptionOutcome | None]:
        """One cycle and, when nothing fits, DefaultPreemption's outcome from the same cycle
        (``nominated_node`` + victims when evicting lower-priority pods makes room)."""
        if self.placer is not None:
            return self.placer.schedule_or_preempt(pod)
        return self.sched.schedule_or_preempt(pod)

    def lower_bound_since(self, priority: int, version: int) -> bool:
        """Whether a pod of priority below ``priority`` was bound after ``version`` (a new
        possible preemption victim)."""
        return any(v > version for p, v in self.bound_at.items() if p < priority)

    # -- changes ---------------------------------------------------------------------------

    def bind(self, pod: Pod, node: str) -> None:
        """Place ``pod`` on ``node`` (``Scheduler.assume``), bind the claims it waited for
        (VolumeBinding's PreBind) and refresh that node's class."""
        self.sched.assume(pod, node)
        self.version += 1
        self.bound_at[self.sched.index.priority(pod)] = self.version
        index = self.sched.index
        pvs = pv_index(index) if index.cluster is self.state else None
        if bind_claims(self.state, pod, index.node_infos[index.by_name[node]].node, pvs):
            # a claim's state changed: cached "does not fit" verdicts may be stale
            self.released += 1
            self.sched.index.cache.clear()
        if self.placer is not None:
            self.placer.node_changed(self.sched.index.by_name[node])

    def forget(self, pod: Pod, node: str) -> None:
        """Remove ``pod`` from ``node`` (``Scheduler.forget``)."""
        if not self.sched.forget(pod, node):
            return
        self.version += 1
        self.released += 1
        if self.placer is not None:
            self.placer.node_changed(self.sched.index.by_name[node])

    def add_node(self, node: Node) -> None:
        """A new node (autoscaler): ``Scheduler.add_node``, then the placer's classes."""
        j = self.sched.add_node(node)
        self.version += 1
        self.released += 1
        if self.placer is not None:
            self.placer.node_added(j)
