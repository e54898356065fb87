"""``Scheduler``: the public face of the kube-scheduler model.

``evaluate(pod)`` runs one cycle and returns what kube-scheduler found (message, per-node
verdicts, preemption outcome; ``gpuplane.why_pending`` turns it into causes and fixes);
``schedule(pod)`` runs a full cycle (filter, score, pick; ``schedule_or_preempt`` also returns
the PostFilter outcome), ``assume(pod, node)`` places a pod, ``forget(pod, node)`` removes it
and ``add_node(node)`` adds a node, so simulate can change the cluster one event at a time. The cluster is indexed once
(:class:`ClusterIndex`), so many pods cost little each.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Node, Pod
from gpuplane.k8s.requests import pod_requests
from gpuplane.k8s.wellknown import DEFAULT_SCHEDULER
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import (
    ERR_NO_NODES_AVAILABLE,
    FitError,
    ScheduleResult,
    Status,
)
from gpuplane.scheduler.index import ClusterIndex
from gpuplane.scheduler.preemption import PreemptionOutcome, run_postfilter
from gpuplane.scheduler.runtime import Diagnosis, Framework
from gpuplane.scheduler.scoring import score_nodes
from gpuplane.scheduler.versions import Wording, resolve_wording


@dataclass(slots=True)
class Evaluation:
    """What one scheduling cycle found for a pod, in kube-scheduler's own terms.

    ``stage``: ``scheduler`` (no node fits: ``message`` is the FailedScheduling text, with the
    PostFilter clause), ``pre-enqueue`` (a PreEnqueue plugin keeps the pod out of the queue:
    it is never tried, no message; ``pre_enqueue`` says why), ``scheduler-error`` (a PreFilter
    error aborted the cycle),
    ``schedulable`` (``feasible_nodes`` pass every filter). ``groups`` holds each distinct
    failing Status with the names of its nodes, ``group_nodes`` the same nodes' indexes in the
    cluster index (for numpy over its matrices, without looking names up). The why-pending layer builds its explanation
    (causes, fixes) on top of this; the core knows nothing of it.
    """

    message: str
    stage: str = "scheduler"
    groups: list[tuple[Status, list[str]]] = field(default_factory=list)
    fit_error: FitError | None = None
    preemption: PreemptionOutcome | None = None
    feasible_nodes: list[str] = field(default_factory=list)
    pre_enqueue: Status | None = None
    group_nodes: list[np.ndarray] = field(default_factory=list)


class Scheduler:
    """kube-scheduler's default profile over one cluster snapshot."""

    def __init__(self, cluster: ClusterState, version: str | None = None) -> None:
        self.cluster = cluster
        self.wording: Wording = resolve_wording(version, cluster.kubernetes_version())
        self.index = ClusterIndex(cluster)
        self.framework = Framework(self.index, self.wording)

    # -- cycle pieces ------------------------------------------------------------------------

    def context(self, pod: Pod) -> PodContext:
        try:
            requests = pod_requests(pod)
        except (ValueError, TypeError):
            requests = {}
        return PodContext(pod, requests, self.index.priority(pod), self.wording, self.index)

    def _nominated_extra(self, ctx: PodContext) -> np.ndarray | None:
        """Requests of other pods nominated to nodes with priority >= this pod's
        (``RunFilterPluginsWithNominatedPods`` counts them as already there)."""
        index = self.index
        extra: np.ndarray | None = None
        for other, j in index.nominated:
            if other is ctx.pod or index.priority(other) < ctx.priority:
                continue
            if extra is None:
                extra = np.zeros_like(index.req)
            try:
                requests = pod_requests(other)
            except (ValueError, TypeError):
                continue
            for name, amount in requests.items():
                row = index.resource_index.get(name)
                if row is not None:
                    extra[row, j] += amount
            extra[index.resource_index["pods"], j] += 1
        return extra

    def diagnose(self, pod: Pod) -> tuple[PodContext, Diagnosis]:
        """PreFilter + Filter only (no PostFilter): the raw per-node verdicts."""
        ctx = self.context(pod)
        return ctx, self.framework.run(ctx, self._nominated_extra(ctx))

    def fit_error(self, ctx: PodContext, diag: Diagnosis) -> FitError:
        groups = list(diag.groups.items())
        return FitError(
            num_all_nodes=self.index.num_nodes,
            groups=groups,
            prefilter_msg=diag.prefilter_status.message if diag.prefilter_status is not None else "",
            absent_status=diag.absent_status,
            absent_count=len(diag.absent),
            postfilter_suffix="." if self.wording.postfilter_double_period else "",
        )

    # -- public API --------------------------------------------------------------------------

    def schedule_one(self, pod: Pod) -> ScheduleResult | FitError:
        """One scheduling cycle: the chosen node, or the FitError (with PostFilter text)."""
        return self.schedule_or_preempt(pod)[0]

    def schedule_or_preempt(self, pod: Pod) -> tuple[ScheduleResult | FitError, PreemptionOutcome | None]:
        """One scheduling cycle with its PostFilter outcome.

        ``(ScheduleResult, None)`` when a node fits; else ``(FitError, outcome)`` where
        ``outcome`` is DefaultPreemption's result (``nominated_node`` and ``victims`` when
        evicting lower-priority pods makes room; None when PostFilter does not run: no nodes,
        a PreFilter error). kube-scheduler's ``schedulingCycle`` runs PostFilter right after a
        failed Filter pass on the same snapshot (pkg/scheduler/schedule_one.go), so callers that
        act on the preemption (simulate) get it from the same cycle instead of filtering again.
        """
        if self.index.num_nodes == 0:
            return FitError(num_all_nodes=0, groups=[]), None
        ctx = self.context(pod)
        diag = self.framework.run(ctx, self._nominated_extra(ctx))
        if diag.error:
            return FitError(num_all_nodes=self.index.num_nodes, groups=[], prefilter_msg=diag.error), None
        if len(diag.feasible):
            feasible = diag.feasible.tolist()
            scores = score_nodes(ctx, feasible)
            best = max(feasible, key=lambda j: (scores[j], -j))
            infos = self.index.node_infos
            return ScheduleResult(
                node=infos[best].name,
                evaluated_nodes=self.index.num_nodes,
                feasible_nodes=len(feasible),
                scores={infos[j].name: s for j, s in scores.items()},
            ), None
        fit = self.fit_error(ctx, diag)
        outcome = run_postfilter(self.framework, ctx, diag, ctx.active_plugins)
        fit.postfilter_msg = outcome.message
        return fit, outcome

    def schedule(self, pod: Pod) -> ScheduleResult | FitError:
        return self.schedule_one(pod)

    def assume(self, pod: Pod, node: str) -> None:
        """Place ``pod`` on ``node`` in this model (its resources, ports and labels count from now)."""
        self.index.add_pod(self.index.by_name[node], pod)

    def forget(self, pod: Pod, node_name: str) -> bool:
        """Take ``pod`` off ``node_name`` (it finished or was evicted): the inverse of
        :meth:`assume`, like the scheduler cache's ``RemovePod``. False when it was not there."""
        j = self.index.by_name.get(node_name)
        return j is not None and self.index.remove_pod(j, pod)

    def add_node(self, node: Node) -> int:
        """Add an empty node (an autoscaler launched it), like the cache's ``AddNode``; returns
        its index. The node joins this scheduler's cluster (``nodes``, ``node_by_name``), so
        the ClusterState given must be one the caller owns (simulate's private copy)."""
        name = node.metadata.name
        if name in self.index.by_name:
            raise ValueError(f"node {name!r} already exists")
        self.cluster.nodes.append(node)
        self.cluster.node_by_name[name] = node
        return self.index.add_node(node)

    def check_new_node(
        self, pod: Pod, node: Node, requested: dict[str, int] | None = None
    ) -> tuple[bool, str]:
        """Would ``pod`` fit on ``node``, a node that does not exist yet (an autoscaler's
        template), holding ``requested`` already? ``(fits, reason)``; a PreFilter rejection or
        a PreFilterResult naming existing nodes means no new node can help (``reason`` says so).

        Mirrors Cluster Autoscaler's scale-up simulation, which runs the scheduler framework's
        PreFilter and Filter plugins against a template NodeInfo (cluster-autoscaler
        simulator/clustersnapshot, FAQ "How does scale-up work?"), and Karpenter, which only
        provisions for pods its scheduling simulation can place on a NodeClaim.
        """
        from gpuplane.k8s.cluster import parse_resource_list  # deferred for start-up time
        from gpuplane.scheduler.framework import NodeInfo

        ctx = self.context(pod)
        active, rejected, subset = self.framework.run_prefilter(ctx)
        if rejected is not None:
            if rejected.error:
                return False, rejected.error
            status = rejected.prefilter_status
            return False, status.message if status is not None else "rejected at PreFilter"
        if subset is not None:
            plugins = ", ".join(ctx.prefilter_cut_by)
            return False, f"PreFilter ({plugins}) allows only existing nodes"
        info = NodeInfo(
            index=-1,
            name=node.metadata.name,
            node=node,
            pods=[],
            allocatable=parse_resource_list(node.status.allocatable),
            requested=dict(requested) if requested else {"pods": 0},
        )
        status = self.framework.filter_node(ctx, active, info)
        return (True, "") if status is None else (False, status.message)

    @property
    def plugin_order(self) -> list[str]:
        """The profile's filter plugins, in the order they run."""
        return [p.name for p in self.framework.plugins]

    def evaluate(self, pod: Pod) -> Evaluation:
        """One scheduling cycle for ``pod`` as kube-scheduler would run it now: the filter
        verdicts per node group, and when no node fits the FitError and PostFilter outcome."""
        fw = self.framework
        held = fw.run_pre_enqueue(self.context(pod))
        if held is not None:
            return Evaluation("", stage="pre-enqueue", pre_enqueue=held)
        if self.index.num_nodes == 0:
            return Evaluation(ERR_NO_NODES_AVAILABLE)
        ctx = self.context(pod)
        diag = fw.run(ctx, self._nominated_extra(ctx))
        if diag.error:
            return Evaluation(diag.error, stage="scheduler-error")
        # Names for the report, indexes for the causes: one C pass per group each (a pod's
        # verdicts name every node of the cluster).
        names = self.node_names()
        verdicts = [(status, _indexes(nodes)) for status, nodes in diag.groups.items()]
        if diag.absent_status is not None and diag.absent:
            verdicts.append((diag.absent_status, _indexes(diag.absent)))
        groups = [(status, names[ids].tolist()) for status, ids in verdicts]
        group_nodes = [ids for _, ids in verdicts]
        if len(diag.feasible):
            feasible = names[diag.feasible].tolist()
            return Evaluation(
                "", stage="schedulable", groups=groups, feasible_nodes=feasible, group_nodes=group_nodes
            )
        fit = self.fit_error(ctx, diag)
        scheduler_name = pod.spec.scheduler_name or DEFAULT_SCHEDULER
        if scheduler_name != DEFAULT_SCHEDULER:
            # Another scheduler answers this pod: no kube-scheduler PostFilter; Volcano words
            # the same filter verdicts its own way.
            message = volcano_message(fit) if scheduler_name == "volcano" else ""
            return Evaluation(message, groups=groups, fit_error=fit, group_nodes=group_nodes)
        outcome = run_postfilter(fw, ctx, diag, ctx.active_plugins)
        fit.postfilter_msg = outcome.message
        return Evaluation(
            fit.message(), groups=groups, fit_error=fit, preemption=outcome, group_nodes=group_nodes
        )

    def node_names(self) -> np.ndarray:
        """Node index -> name, as an object array (kept in the index cache, which a new node
        clears)."""
        cache = self.index.cache
        names = cache.get("node-names")
        if names is None or len(names) != self.index.num_nodes:
            names = cache["node-names"] = np.array(
                [info.name for info in self.index.node_infos], dtype=object
            )
        return names


def _indexes(nodes: list[int]) -> np.ndarray:
    """Node indexes as an array, one C pass."""
    return np.fromiter(nodes, dtype=np.intp, count=len(nodes))


def volcano_message(fit: FitError) -> str:
    """Volcano's ``FitErrors.Error()`` (volcano-sh/volcano pkg/scheduler/api/unschedule_info.go):
    ``0/<n> nodes are unavailable: <histogram>.`` where n counts the nodes that recorded an
    error and a resource shortfall names one resource (reference/scheduling.md §4.2); the
    device resource is named when it is short, as Volcano's predicates report it."""
    from gpuplane.gpu.resources import is_gpu_resource  # deferred for start-up time
    from gpuplane.scheduler.framework import build_fit_message

    if fit.prefilter_msg:
        return ""
    hist: Counter[str] = Counter()
    failing = 0
    for status, nodes in fit.groups:
        failing += len(nodes)
        reasons = list(status.reasons)
        if status.plugin == "NodeResourcesFit" and len(reasons) > 1:
            gpu = [r for r in reasons if is_gpu_resource(r.removeprefix("Insufficient "))]
            reasons = gpu[:1] or reasons[:1]
        for reason in reasons:
            hist[reason] += len(nodes)
    if not failing:
        return "all nodes are unavailable"
    return build_fit_message(failing, "", hist).replace("nodes are available", "nodes are unavailable", 1)
