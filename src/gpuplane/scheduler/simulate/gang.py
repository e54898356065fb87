"""Gang layers in front of the kube-scheduler model: Volcano and scheduler-plugins coscheduling.

Both place a job's pods all-or-nothing, which is what prevents the deadlock of partly placed
distributed jobs (reference/scheduling.md §4.1). Under either mode every multi-pod job is a
gang: ``minMember`` comes from its PodGroup / ``minAvailable`` / operator gang policy, else
it is every pod of the job (what the training operators set when gang scheduling is on).

**Volcano** (volcano-sh/volcano ``pkg/scheduler/actions/{enqueue,allocate}``,
``plugins/{gang,proportion,capacity,priority}``; reference §4.2). Each session: ``enqueue``
admits a PodGroup to ``Inqueue`` only while its queue's ``capability`` holds its minimum
resources, else the PodGroup event ``queue resource quota insufficient: insufficient <res>``;
``allocate`` takes queues by lowest share (allocated / deserved, deserved = cluster GPUs x
weight / sum of weights; proportion plugin), jobs in a queue by priority then creation, and
places a job's tasks one by one, committing only when ``minAvailable`` are placed (else the
placements are discarded: no GPU is held). Unplaced pods read Volcano's texts:
``0/<n> nodes are unavailable: ...`` (``FitErrors``) or ``Pod <ns>/<name> can possibly be
assigned to <node>, once minAvailable is satisfied``; the job gets the PodGroup condition
``<min - schedulable>/<total> tasks in gang unschedulable: pod group is not ready, ...``.
Not modelled: reclaim between queues, preempt action, Volcano's own node scoring (the
default profile's scores are used to pick among feasible nodes).

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

from collections import Counter
from typing import TYPE_CHECKING, Any

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.cluster import parse_resource_list
from gpuplane.k8s.requests import pod_requests
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.scheduler import volcano_message
from gpuplane.scheduler.simulate.model import SimJob, SimPod

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.engine import Engine

DEFAULT_QUEUE = "default"
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


def _objects(engine: Engine, kind: str, group: str) -> list[Any]:
    return [o for o in engine.all_objects if o.kind == kind and o.group == group]


def _gpu_request(pod: SimPod) -> dict[str, int]:
    try:
        return pod_requests(pod.pod)
    except (ValueError, TypeError):
        return {}


class VolcanoLayer:
    """Volcano's enqueue + allocate actions over the kube-scheduler filters (module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.queues: dict[str, dict[str, Any]] = {}
        for q in _objects(engine, "Queue", "scheduling.volcano.sh"):
            spec = q.get("spec") or {}
            weight = spec.get("weight", 1) if isinstance(spec, dict) else 1
            capability = spec.get("capability") if isinstance(spec, dict) else None
            self.queues[q.name] = {
                "weight": weight if isinstance(weight, int) and weight > 0 else 1,
                "capability": parse_resource_list(capability) if isinstance(capability, dict) else {},
            }
        self.queues.setdefault(DEFAULT_QUEUE, {"weight": 1, "capability": {}})
        self.inqueue: set[int] = set()

    def on_arrival(self, job: SimJob) -> None:
        self.engine.create_pods(job)

    def on_job_finished(self, job: SimJob) -> None:
        self.inqueue.discard(id(job))

    def on_event(self, kind: str, payload: Any) -> None:
        return None

    # -- queue arithmetic ------------------------------------------------------------------

    def _queue_of(self, job: SimJob) -> str:
        return job.queue or DEFAULT_QUEUE

    def _allocated(self, queue: str) -> Counter[str]:
        used: Counter[str] = Counter()
        for job in self.engine.jobs:
            if self._queue_of(job) != queue or job.finished_s is not None:
                continue
            for pod in job.pods:
                if pod.node is not None:
                    used.update(_gpu_request(pod))
        return used

    def _share(self, queue: str) -> float:
        total, _ = self.engine.gpu_counts()
        weights = sum(q["weight"] for q in self.queues.values())
        deserved = total * self.queues[queue]["weight"] / weights if weights else 0
        if deserved <= 0:
            return 0.0
        allocated = sum(v for k, v in self._allocated(queue).items() if is_gpu_resource(k))
        return allocated / deserved

    def _enqueue(self, job: SimJob) -> str:
        """'' when the queue lets the PodGroup in (Inqueue), else the PodGroup event text."""
        queue = self._queue_of(job)
        info = self.queues.get(queue)
        if info is None:
            return f"queue {queue} does not exist: the PodGroup stays Pending (gpuplane)"
        capability = info["capability"]
        if not capability or id(job) in self.inqueue:
            self.inqueue.add(id(job))
            return ""
        need: Counter[str] = Counter()
        for pod in sorted(job.pods, key=lambda p: p.seq)[: job.min_member]:
            if pod.node is None:
                need.update(_gpu_request(pod))
        used = self._allocated(queue)
        short = sorted(
            r for r, cap in capability.items() if need.get(r, 0) and used.get(r, 0) + need[r] > cap
        )
        if short:
            return "queue resource quota insufficient: " + ", ".join(f"insufficient {r}" for r in short)
        self.inqueue.add(id(job))
        return ""

    # -- allocate --------------------------------------------------------------------------

    def schedule_pass(self) -> bool:
        engine = self.engine
        progress = False
        waiting: dict[str, list[SimJob]] = {}
        for job in engine.jobs:
            if job.arrival_s > engine.now or job.finished_s is not None:
                continue
            progress |= engine.create_pods(job)
            if any(p.node is None and p.created for p in job.pods):
                waiting.setdefault(self._queue_of(job), []).append(job)
        for jobs in waiting.values():
            jobs.sort(key=lambda j: (-j.priority, j.arrival_s, j.order))
        while waiting:
            queue = min(waiting, key=lambda q: (self._share(q) if q in self.queues else 0.0, q))
            job = waiting[queue].pop(0)
            if not waiting[queue]:
                del waiting[queue]
            refusal = self._enqueue(job)
            if refusal:
                if job.message != refusal:
                    engine.log("podgroup-pending", job=job.key, message=refusal)
                job.message = refusal
                for pod in job.pods:
                    if pod.node is None:
                        pod.message = refusal
                continue
            progress |= self._allocate(job)
        return progress

    def _allocate(self, job: SimJob) -> bool:
        engine = self.engine
        running = [p for p in job.pods if p.node is not None]
        pending = [p for p in job.pods if p.node is None and p.created]
        placed: list[SimPod] = []
        failed: list[tuple[SimPod, FitError]] = []
        for pod in pending:
            result = engine.sim.schedule(pod.pod)
            if isinstance(result, ScheduleResult):
                engine.bind(pod, result.node, waiting=True)
                placed.append(pod)
            else:
                failed.append((pod, result))
        if len(running) + len(placed) >= job.min_member:
            for pod in placed:
                engine.confirm(pod)
            for pod, fit in failed:
                pod.message = volcano_message(fit) or fit.filter_message()
            job.remember(job.message)
            job.message = ""
            return bool(placed)
        # not enough for the gang: discard the session's placements
        nodes = {id(p): p.node for p in placed}
        for pod in placed:
            engine.unplace(pod)
        for pod in placed:
            pod.message = (
                f"Pod {pod.key} can possibly be assigned to {nodes[id(pod)]}, once minAvailable is satisfied"
            )
        origin = ""
        for pod, fit in failed:
            pod.message = volcano_message(fit) or fit.filter_message()
            if not origin:
                origin = f"{pod.name}: {pod.message}"
        job.message = self._gang_message(job, running, placed, failed, origin)
        return False

    def _gang_message(
        self, job: SimJob, running: list[SimPod], placed: list[SimPod], failed: list[Any], origin: str
    ) -> str:
        """PodGroup ``Unschedulable`` condition (api/job_info.go ``FitError``; reference §4.2)."""
        total = len(job.pods)
        statuses = Counter({"Pending": total - len(running)})
        if running:
            statuses["Running"] = len(running)
        parts = sorted([f"{n} {s}" for s, n in statuses.items()] + [f"{job.min_member} minAvailable"])
        pending = sorted(
            f"{n} {r}" for r, n in (("Schedulable", len(placed)), ("Unschedulable", len(failed))) if n
        )
        text = f"pod group is not ready, {', '.join(parts)}; Pending: {', '.join(pending)}"
        if origin:
            text += f". Origin reason is {origin}"
        schedulable = len(running) + len(placed)
        return f"{job.min_member - schedulable}/{total} tasks in gang unschedulable: {text}"


class CoschedulingLayer:
    """scheduler-plugins Coscheduling: QueueSort + PreFilter + Permit barrier + PostFilter."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        args = engine.options.scenario.coscheduling if engine.options.scenario else {}
        self.permit_wait = float(args.get("permitWaitingTimeSeconds", PERMIT_WAITING_TIME_S))
        self.reject_pct = float(args.get("podGroupRejectPercentage", POD_GROUP_REJECT_PERCENTAGE))
        self.timeouts: dict[int, float] = {}  # id(job) -> time the waiting pods time out
        self.pg_timeout: dict[str, float] = {}
        for pg in _objects(engine, "PodGroup", "scheduling.x-k8s.io"):
            seconds = pg.get("spec", "scheduleTimeoutSeconds")
            if isinstance(seconds, int) and seconds > 0:
                self.pg_timeout[f"{pg.namespace or 'default'}/{pg.name}"] = float(seconds)

    def on_arrival(self, job: SimJob) -> None:
        self.engine.create_pods(job)

    def on_job_finished(self, job: SimJob) -> None:
        self.timeouts.pop(id(job), None)

    def _timeout(self, job: SimJob) -> float:
        return self.pg_timeout.get(f"{job.namespace}/{job.name}", self.permit_wait)

    def on_event(self, kind: str, payload: Any) -> None:
        if kind != "permit-timeout":
            return
        job, deadline = payload
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
            n = engine.sim.num_nodes
            for pod in pending:
                text = NOT_ENOUGH_SIBLINGS.format(pod.name, len(created), job.min_member)
                pod.message = f"0/{n} nodes are available: {text}."
            return False
        progress = False
        for pod in pending:
            result = engine.sim.schedule(pod.pod)
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
            engine.push(deadline, "permit-timeout", (job, deadline))
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
