"""Runs the default profile's PreFilter and Filter plugins for one pod over all nodes.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go
(``RunPreFilterPlugins``, ``RunFilterPlugins``: first failing Filter plugin wins per node)
and pkg/scheduler/schedule_one.go (``findNodesThatFitPod``). Plugin order is the default
profile's (pkg/scheduler/apis/config/v1/default_plugins.go, reference/scheduling.md §2.1).

Speed: static plugins run once per static node class; NodeResourcesFit is vectorized, and so
is any plugin with the ``NodeSetFilter`` capability (PodTopologySpread); the remaining plugins
run per node only for pods that use them (upstream's PreFilter Skip).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import UU, Code, NodeInfo, Status, join_plugins
from gpuplane.scheduler.index import ClusterIndex
from gpuplane.scheduler.plugins.base import FilterPlugin, NodeSetFilter, VectorFilter
from gpuplane.scheduler.plugins.dynamic_resources import DynamicResources
from gpuplane.scheduler.plugins.inter_pod_affinity import InterPodAffinity
from gpuplane.scheduler.plugins.node_affinity import NodeAffinity
from gpuplane.scheduler.plugins.node_name import NodeName
from gpuplane.scheduler.plugins.node_ports import NodePorts
from gpuplane.scheduler.plugins.node_resources_fit import NodeResourcesFit
from gpuplane.scheduler.plugins.node_unschedulable import NodeUnschedulable
from gpuplane.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from gpuplane.scheduler.plugins.pod_topology_spread import PodTopologySpread
from gpuplane.scheduler.plugins.taint_toleration import TaintToleration
from gpuplane.scheduler.plugins.volume_binding import VolumeBinding
from gpuplane.scheduler.plugins.volume_restrictions import VolumeRestrictions
from gpuplane.scheduler.plugins.volume_zone import VolumeZone
from gpuplane.scheduler.versions import ABSENT_FILTERED, ABSENT_PLUGINS, Wording

# schedule_one.go (v1.30-v1.31, PR #119779): status of nodes cut by a PreFilterResult.
FILTERED_BY_PREFILTER_RESULT = "node is filtered out by the prefilter result"


def default_filter_plugins(wording: Wording) -> list[FilterPlugin]:
    """The default profile's filtering plugins in upstream order (DynamicResources from v1.34)."""
    plugins: list[FilterPlugin] = [
        NodeUnschedulable(),
        NodeName(),
        TaintToleration(),
        NodeAffinity(),
        NodePorts(),
        NodeResourcesFit(),
        VolumeRestrictions(),
        NodeVolumeLimits(),
        VolumeBinding(),
        VolumeZone(),
        PodTopologySpread(),
        InterPodAffinity(),
    ]
    if wording.minor >= 34:
        plugins.append(DynamicResources())
    return plugins


@dataclass(slots=True)
class Diagnosis:
    """What filtering found for one pod (upstream ``Diagnosis`` + the feasible nodes)."""

    feasible: np.ndarray
    # distinct Status -> node indexes that got it
    groups: dict[Status, list[int]] = field(default_factory=dict)
    prefilter_status: Status | None = None
    # whether every PreFilter plugin ran (DynamicResources' PostFilter needs its state)
    prefilter_completed: bool = True
    absent_status: Status | None = None
    absent: list[int] = field(default_factory=list)
    error: str = ""


class Framework:
    """The default scheduler profile over one :class:`ClusterIndex`."""

    def __init__(self, index: ClusterIndex, wording: Wording) -> None:
        self.index = index
        self.wording = wording
        self.plugins = default_filter_plugins(wording)
        self.static_plugins = [p for p in self.plugins if p.static]
        self.dynamic_plugins = [p for p in self.plugins if not p.static]

    # -- PreEnqueue --------------------------------------------------------------------------

    def run_pre_enqueue(self, ctx: PodContext) -> Status | None:
        """``RunPreEnqueuePlugins``: the first plugin that keeps the pod out of the queue."""
        for plugin in self.plugins:
            status = plugin.pre_enqueue(ctx)
            if status is not None:
                return status
        return None

    # -- PreFilter ---------------------------------------------------------------------------

    def run_prefilter(self, ctx: PodContext) -> tuple[list[FilterPlugin], Diagnosis | None, set[int] | None]:
        """Relevant plugins, a terminal Diagnosis when PreFilter rejects, and the node subset."""
        active = [p for p in self.plugins if p.relevant(ctx)]
        ctx.active_plugins = active
        names: set[str] | None = None
        cutting: list[str] = []
        last_unschedulable: Status | None = None
        for plugin in self.plugins:
            if plugin not in active and not plugin.prefilter_on_skip:
                continue
            result, status = plugin.pre_filter(ctx)
            if status is not None and not status.is_success:
                if status.code == Code.ERROR:
                    return (
                        active,
                        Diagnosis(
                            np.empty(0, dtype=np.int64), error=status.message, prefilter_completed=False
                        ),
                        None,
                    )
                if status.code == UU:
                    return active, self._rejected_all(status, completed=False), None
                last_unschedulable = status
                continue
            if result is not None:
                cutting.append(plugin.name)
                names = result.node_names if names is None else names & result.node_names
                if not names:
                    text = (
                        f"node(s) didn't satisfy plugin {cutting[0]}"
                        if len(cutting) == 1
                        else f"node(s) didn't satisfy plugin(s) {join_plugins(cutting)} simultaneously"
                    )
                    return active, self._rejected_all(Status(UU, (text,), plugin.name), completed=False), None
        if last_unschedulable is not None:
            return active, self._rejected_all(last_unschedulable, completed=True), None
        if names is None:
            return active, None, None
        subset = {self.index.by_name[name] for name in names if name in self.index.by_name}
        ctx.prefilter_cut_by = cutting
        return active, None, subset

    def _rejected_all(self, status: Status, *, completed: bool) -> Diagnosis:
        diag = Diagnosis(np.empty(0, dtype=np.int64), prefilter_status=status, prefilter_completed=completed)
        diag.groups[status] = list(range(self.index.num_nodes))
        return diag

    # -- Filter ------------------------------------------------------------------------------

    def run(self, ctx: PodContext, extra: np.ndarray | None = None) -> Diagnosis:
        """PreFilter then Filter over every node; ``extra`` adds nominated pods' requests.

        ``RunFilterPluginsWithNominatedPods`` (runtime/framework.go): a node with pods nominated
        to it of priority >= this pod's is filtered with them added (their requests in
        ``extra``, the pods in ``ctx.added`` for InterPodAffinity and NodePorts), and when that
        passes, filtered again without them: a pod must not depend on a nominated pod (its
        required affinity satisfied only by one) since that pod may go elsewhere."""
        ctx.added = nominated_pods(self.index, ctx)
        active, rejected, subset = self.run_prefilter(ctx)
        if rejected is not None:
            return rejected
        index = self.index
        if subset is None:
            alive = np.arange(index.num_nodes, dtype=np.int64)
            diag = Diagnosis(alive)
        else:
            alive = np.array(sorted(subset), dtype=np.int64)
            diag = Diagnosis(alive)
            diag.absent = [i for i in range(index.num_nodes) if i not in subset]
            # versions.py prefilter_absent: how upstream records the nodes the result cut.
            absent_mode = self.wording.prefilter_absent
            if absent_mode == ABSENT_PLUGINS:
                text = f"node(s) didn't satisfy plugin(s) {join_plugins(ctx.prefilter_cut_by)}"
                diag.absent_status = Status(UU, (text,), "")
            elif absent_mode == ABSENT_FILTERED:
                diag.absent_status = Status(UU, (FILTERED_BY_PREFILTER_RESULT,), "")
        groups = diag.groups
        active_set = set(map(id, active))
        static = [p for p in self.static_plugins if id(p) in active_set]
        alive = self._run_static(ctx, static, alive, groups)
        for plugin in self.dynamic_plugins:
            if id(plugin) not in active_set or len(alive) == 0:
                continue
            if isinstance(plugin, VectorFilter):
                failed = plugin.filter_vector(ctx, alive, extra)
            elif isinstance(plugin, NodeSetFilter):
                failed = plugin.filter_nodes(ctx, alive)
            else:
                failed = None
            if failed is not None:  # a whole-node-set capability answered for every alive node
                if failed:
                    drop = np.zeros(index.num_nodes, dtype=bool)
                    for nodes, node_status in failed:
                        groups.setdefault(node_status, []).extend(nodes.tolist())
                        drop[nodes] = True
                    alive = alive[~drop[alive]]
                continue
            keep: list[int] = []
            infos = index.node_infos
            for j in alive.tolist():
                status = plugin.filter(ctx, infos[j])
                if status is None:
                    keep.append(j)
                elif status.code == Code.ERROR:
                    # RunFilterPlugins wraps a non-rejection; findNodesThatFitPod aborts the cycle.
                    diag.error = f'running "{plugin.name}" filter plugin: {status.message}'
                    diag.feasible = np.empty(0, dtype=np.int64)
                    return diag
                else:
                    groups.setdefault(status, []).append(j)
            alive = np.array(keep, dtype=np.int64)
        if ctx.added and len(alive):
            alive = self._without_nominated(ctx, active_set, alive, groups)
        diag.feasible = alive
        return diag

    def _without_nominated(
        self, ctx: PodContext, active_set: set[int], alive: np.ndarray, groups: dict[Status, list[int]]
    ) -> np.ndarray:
        """The second pass of ``RunFilterPluginsWithNominatedPods`` on the nodes that passed with
        nominated pods added. Static plugins and resource fits cannot turn worse without pods, so
        only the other dynamic plugins run again."""
        added, ctx.added = ctx.added, {}
        try:
            plugins = [
                p for p in self.dynamic_plugins if id(p) in active_set and not isinstance(p, VectorFilter)
            ]
            infos = self.index.node_infos
            keep: list[int] = []
            for j in alive.tolist():
                status = first_failure(ctx, plugins, infos[j]) if j in added else None
                if status is None:
                    keep.append(j)
                else:
                    groups.setdefault(status, []).append(j)
            return np.array(keep, dtype=np.int64)
        finally:
            ctx.added = added

    def _run_static(
        self, ctx: PodContext, plugins: list[FilterPlugin], alive: np.ndarray, groups: dict[Status, list[int]]
    ) -> np.ndarray:
        if not plugins:
            return alive
        infos = self.index.node_infos
        per_node = any(p.static_key(ctx) for p in plugins)
        if per_node:
            keep: list[int] = []
            for j in alive.tolist():
                status = first_failure(ctx, plugins, infos[j])
                if status is None:
                    keep.append(j)
                else:
                    groups.setdefault(status, []).append(j)
            return np.array(keep, dtype=np.int64)
        class_ids = self.index.class_ids
        reps = self.index.class_reps
        verdict: list[Status | None] = [first_failure(ctx, plugins, infos[r]) for r in reps]
        failing_classes = [c for c, s in enumerate(verdict) if s is not None]
        if not failing_classes:
            return alive
        cls = class_ids[alive]
        bad = np.zeros(len(reps), dtype=bool)
        bad[failing_classes] = True
        mask = bad[cls]
        for c in failing_classes:
            nodes = alive[cls == c]
            failure = verdict[c]
            if len(nodes) and failure is not None:
                groups.setdefault(failure, []).extend(nodes.tolist())
        return alive[~mask]

    def filter_node(self, ctx: PodContext, active: list[FilterPlugin], node: NodeInfo) -> Status | None:
        """All active plugins on one node (used by preemption dry runs and the plugin table)."""
        return first_failure(ctx, active, node)


def nominated_pods(index: ClusterIndex, ctx: PodContext) -> dict[int, list[Pod]]:
    """``addGEPriorityNominatedPods``: per node, the other pods nominated there whose priority
    is >= the pod's (the same set whose requests ``Scheduler._nominated_extra`` adds)."""
    out: dict[int, list[Pod]] = {}
    me = ctx.pod
    for other, j in index.nominated:
        if other is me or (me.metadata.uid and other.metadata.uid == me.metadata.uid):
            continue
        if index.priority(other) >= ctx.priority:
            out.setdefault(j, []).append(other)
    return out


def first_failure(ctx: PodContext, plugins: list[FilterPlugin], node: NodeInfo) -> Status | None:
    for plugin in plugins:
        status = plugin.filter(ctx, node)
        if status is not None:
            return status
    return None
