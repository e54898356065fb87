"""Why a pod is Pending: the pre-queue checks, then the scheduler core, then GPU causes.

This layer calls the scheduler core (``Scheduler.evaluate``), never the reverse.
"""

from __future__ import annotations

from gpuplane.k8s.objects import Pod
from gpuplane.progress import task
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending.gpu_causes import add_causes, group_gangs
from gpuplane.why_pending.model import Explanation
from gpuplane.why_pending.prequeue import pre_enqueue_cause, prequeue_explanation, workload_explanations

# The why-pending stage of a pod a PreEnqueue plugin keeps out of the queue (spec/cli.md).
PRE_ENQUEUE_STAGES = {"DynamicResources": "claims-pending"}


def explain(sched: Scheduler, pod: Pod) -> Explanation:
    """Why ``pod`` is Pending, in kube-scheduler's words, with causes and fixes."""
    early = prequeue_explanation(sched, pod)
    if early is not None and early.stage != "scheduler":
        add_causes(sched, early)
        return early
    expl = scheduler_explanation(sched, pod)
    if early is not None:
        expl.causes[:0] = early.causes
        expl.fixes[:0] = early.fixes
    add_causes(sched, expl)
    return expl


def pending(sched: Scheduler, only: str | None = None) -> list[Explanation]:
    """Explanations for every Pending pod (or the one ``ns/name``), then for workloads whose
    pods do not exist yet (Kueue-suspended, quota-refused)."""
    pods = sched.cluster.pending_pods
    if only is not None:
        pods = [p for p in pods if p.key == only]
    out = []
    with task(f"explaining {len(pods):,} Pending pods", len(pods)) as advance:
        for p in pods:
            out.append(explain(sched, p))
            advance(1)
    if only is None:
        group_gangs(out)
        out.extend(workload_explanations(sched))
    return out


def scheduler_explanation(sched: Scheduler, pod: Pod) -> Explanation:
    """The scheduling cycle's verdicts for ``pod`` (no causes yet)."""
    found = sched.evaluate(pod)
    if found.pre_enqueue is not None:
        stage = PRE_ENQUEUE_STAGES.get(found.pre_enqueue.plugin, found.stage)
        expl = Explanation(pod, "", stage=stage, plugin_order=sched.plugin_order)
        pre_enqueue_cause(expl, found.pre_enqueue)
        return expl
    return Explanation(
        pod,
        found.message,
        groups=found.groups,
        stage=found.stage,
        fit_error=found.fit_error,
        preemption=found.preemption,
        feasible_nodes=found.feasible_nodes,
        plugin_order=sched.plugin_order,
        node_ids=found.group_nodes,
    )
