"""Why a pod is Pending: the pre-queue checks, then the scheduler core, then GPU causes.

This layer calls the scheduler core (``Scheduler.evaluate``), never the reverse.
"""

from __future__ import annotations

from gpuplane.k8s.objects import Pod
from gpuplane.progress import task
from gpuplane.scheduler.scheduler import Evaluation, Scheduler
from gpuplane.why_pending.evaluations import Evaluations
from gpuplane.why_pending.gpu_causes import add_causes, group_gangs
from gpuplane.why_pending.model import Explanation
from gpuplane.why_pending.prequeue import pre_enqueue_cause, prequeue_explanation, workload_explanations

# The why-pending stage of a pod a PreEnqueue plugin keeps out of the queue (spec/cli.md).
PRE_ENQUEUE_STAGES = {"DynamicResources": "claims-pending"}


def explain(sched: Scheduler, pod: Pod, evaluations: Evaluations | None = None) -> Explanation:
    """Why ``pod`` is Pending, in kube-scheduler's words, with causes and fixes.

    ``evaluations``: the explaining session's memo, shared by the scheduling-equivalent pods it
    explains (None: this pod's own cycle and causes). The causes of a pod nothing stops before
    the queue are those of its cycle and its spec, so they are worked out once per key too."""
    early = prequeue_explanation(sched, pod)
    if early is not None and early.stage != "scheduler":
        add_causes(sched, early)
        return early
    found = sched.evaluate(pod) if evaluations is None else evaluations.evaluate(pod)
    expl = scheduler_explanation(sched, pod, found)
    if early is not None:  # its causes come first, and are the pod's own: none is kept
        expl.causes[:0] = early.causes
        expl.fixes[:0] = early.fixes
        add_causes(sched, expl)
        return expl
    known = evaluations.causes(found) if evaluations is not None else None
    if known is not None:
        expl.causes, expl.fixes = list(known[0]), list(known[1])
        return expl
    add_causes(sched, expl)
    if evaluations is not None:
        evaluations.keep_causes(found, expl.causes, expl.fixes)
    return expl


def pending(sched: Scheduler, only: str | None = None) -> list[Explanation]:
    """Explanations for every Pending pod (or the one ``ns/name``), then for workloads whose
    pods do not exist yet (Kueue-suspended, quota-refused).

    One scheduling cycle per scheduling-equivalent pod (``Evaluations``): nothing changes the
    cluster while its Pending pods are explained."""
    pods = sched.cluster.pending_pods
    if only is not None:
        pods = [p for p in pods if p.key == only]
    out = []
    evaluations = Evaluations(sched)
    with task(f"explaining {len(pods):,} Pending pods", len(pods)) as advance:
        for p in pods:
            out.append(explain(sched, p, evaluations))
            advance(1)
    if only is None:
        group_gangs(out)
        out.extend(workload_explanations(sched))
    return out


def scheduler_explanation(sched: Scheduler, pod: Pod, found: Evaluation | None = None) -> Explanation:
    """The scheduling cycle's verdicts for ``pod`` (no causes yet); ``found``: that cycle, when
    already run."""
    if found is None:
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
