"""scheduler-plugins coscheduling gang layer in front of the kube-scheduler model.

Coscheduling places a job's pods all-or-nothing, which is what prevents the deadlock of partly placed
distributed jobs (reference/scheduling.md §4.1). Under this mode every multi-pod job is a
gang: ``minMember`` comes from its PodGroup / ``minAvailable`` / operator gang policy, else
it is every pod of the job (what the training operators set when gang scheduling is on).

**Coscheduling** (kubernetes-sigs/scheduler-plugins ``pkg/coscheduling``; reference §4.3).
Pods queue by priority then PodGroup creation time (QueueSort), so a group is tried together.
PreFilter rejects a group with fewer pods than ``minMember`` (``pre-filter pod %v cannot find
enough sibling pods, ...``). Each assumed pod waits at Permit until ``minMember`` are assumed,
then all bind. When a member does not fit, PostFilter rejects the waiting siblings (``optimistic
rejection in PostFilter``) unless the group is within ``podGroupRejectPercentage`` (10%) of
``minMember``; siblings left waiting are rejected when ``scheduleTimeoutSeconds`` (PodGroup) or
``permitWaitingTimeSeconds`` (60 s) passes: ``rejected due to timeout after waiting <d> at
plugin Coscheduling``. Waiting pods hold their node resources meanwhile (counted as idle GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.simulate.layers.base import EngineView, EventPayload
from gpuplane.scheduler.simulate.model import SimJob, SimPod

# scheduler-plugins apis/config/v1 defaults (CoschedulingArgs)
PERMIT_WAITING_TIME_S = 60.0
POD_GROUP_REJECT_PERCENTAGE = 10
# pkg/coscheduling/core/core.go texts (reference §4.3)
NOT_ENOUGH_SIBLINGS = (
    "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: {}"
)
POSTFILTER_REJECT = "PodGroup {} gets rejected due to Pod {} is unschedulable even after PostFilter"
OPTIMISTIC_REJECTION = "0/1 nodes are available: 1 optimistic rejection in PostFilter."
TIMEOUT_REJECTION = (
    "0/1 nodes are available: 1 rejected due to timeout after waiting {} at plugin Coscheduling."
)


@dataclass(frozen=True, slots=True)
class PermitTimeout:
    """The event when a group's pods waiting at Permit time out."""

    job: SimJob
    deadline: float


def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String()`` for whole seconds: ``1m0s``, ``10s``, ``1h0m0s``."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


class CoschedulingLayer:
    """scheduler-plugins Coscheduling: QueueSort + PreFilter + Permit barrier + PostFilter."""

    def __init__(self, engine: EngineView) -> None:
        self.engine = engine
        args = engine.scenario.coscheduling if engine.scenario else {}
        self.permit_wait = float(args.get("permitWaitingTimeSeconds", PERMIT_WAITING_TIME_S))
        self.reject_pct = float(args.get("podGroupRejectPercentage", POD_GROUP_REJECT_PERCENTAGE))
        self.timeouts: dict[int, float] = {}  # id(job) -> time the waiting pods time out
        self.pg_timeout: dict[str, float] = {}
        for pg in engine.objects_of("PodGroup", "scheduling.x-k8s.io"):
            seconds = pg.get("spec", "scheduleTimeoutSeconds")
            if isinstance(seconds, int) and seconds > 0:
                self.pg_timeout[f"{pg.namespace or 'default'}/{pg.name}"] = float(seconds)

    def on_arrival(self, job: SimJob) -> None:
        self.engine.create_pods(job)

    def on_job_finished(self, job: SimJob) -> None:
        self.timeouts.pop(id(job), None)

    def _timeout(self, job: SimJob) -> float:
        return self.pg_timeout.get(f"{job.namespace}/{job.name}", self.permit_wait)

    def on_event(self, kind: str, payload: EventPayload) -> None:
        if kind != "permit-timeout" or not isinstance(payload, PermitTimeout):
            return
        job, deadline = payload.job, payload.deadline
        if self.timeouts.get(id(job)) != deadline:
            return
        del self.timeouts[id(job)]
        text = TIMEOUT_REJECTION.format(go_duration(self._timeout(job)))
        for pod in job.pods:
            if pod.waiting_permit:
                self.engine.unplace(pod)
                pod.message = text
        self.engine.log("permit-timeout", job=job.key, message=text)

    def schedule_pass(self) -> bool:
        engine = self.engine
        progress = False
        jobs = []
        for job in engine.jobs:
            if job.arrival_s > engine.now or job.finished_s is not None:
                continue
            progress |= engine.create_pods(job)
            if any(p.node is None and p.created for p in job.pods):
                jobs.append(job)
        jobs.sort(key=lambda j: (-j.priority, j.arrival_s, j.order))
        for job in jobs:
            progress |= self._group(job)
        return progress

    def _group(self, job: SimJob) -> bool:
        engine = self.engine
        group = f"{job.namespace}/{job.name}"
        created = [p for p in job.pods if p.created]
        pending = sorted((p for p in created if p.node is None), key=lambda p: p.key)
        if len(created) < job.min_member:
            n = engine.num_nodes
            for pod in pending:
                text = NOT_ENOUGH_SIBLINGS.format(pod.name, len(created), job.min_member)
                pod.message = f"0/{n} nodes are available: {text}."
            return False
        progress = False
        for pod in pending:
            result = engine.schedule(pod)
            if isinstance(result, ScheduleResult):
                engine.bind(pod, result.node, waiting=True)
                progress = True
                assigned = sum(1 for p in job.pods if p.node is not None)
                if assigned >= job.min_member:
                    for member in job.pods:
                        if member.waiting_permit:
                            engine.confirm(member)
                    self.timeouts.pop(id(job), None)
                continue
            self._post_filter(job, pod, result, group)
            break
        waiting = any(p.waiting_permit for p in job.pods)
        if waiting and id(job) not in self.timeouts:
            deadline = engine.now + self._timeout(job)
            self.timeouts[id(job)] = deadline
            engine.push(deadline, "permit-timeout", PermitTimeout(job, deadline))
        return progress

    def _post_filter(self, job: SimJob, pod: SimPod, fit: FitError, group: str) -> None:
        """DefaultPreemption first (it runs before Coscheduling in the profile), then the
        Coscheduling PostFilter on the waiting siblings."""
        engine = self.engine
        assigned = sum(1 for p in job.pods if p.node is not None)
        preemption = fit.postfilter_msg
        reasons = [preemption] if preemption else []
        if assigned < job.min_member:
            missing = (job.min_member - assigned) / job.min_member
            if missing > self.reject_pct / 100:
                reasons.append(POSTFILTER_REJECT.format(group, pod.name))
                for member in job.pods:
                    if member.waiting_permit:
                        engine.unplace(member)
                        member.message = OPTIMISTIC_REJECTION
                self.timeouts.pop(id(job), None)
        text = fit.filter_message()
        if reasons:
            text += " " + ", ".join(reasons)
        pod.message = text
