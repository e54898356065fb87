"""Volcano gang layer in front of the kube-scheduler model.

Volcano places a job's pods all-or-nothing, which is what prevents the deadlock of partly placed
distributed jobs (reference/scheduling.md §4.1). Under this mode every multi-pod job is a
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
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.cluster import parse_resource_list
from gpuplane.k8s.requests import pod_requests
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.scheduler import volcano_message
from gpuplane.scheduler.simulate.layers.base import EngineView, EventPayload
from gpuplane.scheduler.simulate.model import SimJob, SimPod

DEFAULT_QUEUE = "default"


def _gpu_request(pod: SimPod) -> dict[str, int]:
    try:
        return pod_requests(pod.pod)
    except (ValueError, TypeError):
        return {}


class VolcanoLayer:
    """Volcano's enqueue + allocate actions over the kube-scheduler filters (module docstring)."""

    def __init__(self, engine: EngineView) -> None:
        self.engine = engine
        self.queues: dict[str, dict[str, Any]] = {}
        for q in engine.objects_of("Queue", "scheduling.volcano.sh"):
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

    def on_event(self, kind: str, payload: EventPayload) -> None:
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
            result = engine.schedule(pod)
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
        self,
        job: SimJob,
        running: list[SimPod],
        placed: list[SimPod],
        failed: list[tuple[SimPod, FitError]],
        origin: str,
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
