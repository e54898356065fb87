"""The event loop of ``gpuplane simulate``: arrivals, scheduling passes, completions, nodes.

Time model (the issue's): a workload arrives at ``arrival_s``; its pods are created
(ResourceQuota admission, ``quota.py``), admitted by the chosen layer (``layers/``: kube-scheduler
alone, Volcano or coscheduling gangs, Kueue; each sees the engine through ``layers.base.EngineView``) and placed by the kube-scheduler model
(:class:`SimCluster`, one cycle per pod in queue order: priority, then arrival — upstream
``PrioritySort``). A pod runs from its placement (plus an image pull on a node the autoscaler
just created) for ``duration_s``. A distributed job makes progress only while its gang runs:
its clock starts when ``min_member`` pods run (every pod unless a gang says fewer), so a partly
placed job holds its GPUs and never progresses. When the gang is smaller than the job (Volcano
``minAvailable < replicas``: the job controller sets the Job ``Running`` once
``running + succeeded + failed >= minAvailable``, volcano-sh/volcano
``pkg/controllers/job/state/pending.go``), the first ``min_member`` pods work for
``duration_s`` from that moment, each later pod works ``duration_s`` from its own start, and the
job completes when every pod has (``running.go``: Completed when ``succeeded + failed`` equals
the replicas); evicting one of its pods loses that pod's work only. When no event is left that could change the state and such jobs remain,
the run ends in a **deadlock**, reported with the jobs, the pods placed and the GPUs held idle.

After every instant with events the engine runs scheduling passes until nothing more can be
placed (kube-scheduler retries unschedulable pods when the cluster changes:
``MoveAllToActiveOrBackoffQueue`` on pod deletion / node add), then records a timeline step
with GPU allocation (allocated / total GPUs) and the GPUs held idle by waiting gang members.
Every state change is an event, so a pod that starts running after its image pull opens a step
too (``running``): the GPUs it held while pulling count as idle only until then.

Work thrown away by evictions (preemption, Kueue eviction) is summed in ``preempted_gpu_s``:
GPU-seconds a pod (or the whole gang of a distributed job, whose clock restarts) had worked.
A bare Pod refused by ResourceQuota stays refused (the API returns 403 to whoever created it;
only controllers retry, with ``FailedCreate`` events: reference/platform.md §1.2).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np

from gpuplane.gpu.resources import is_gpu_resource
from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.wellknown import KUEUE_QUEUE_LABEL as QUEUE_LABEL
from gpuplane.scheduler.framework import FitError, ScheduleResult
from gpuplane.scheduler.simulate.coldstart import ColdStartModel, default_model
from gpuplane.scheduler.simulate.inputs import Inputs, apply_inputs
from gpuplane.scheduler.simulate.layers.base import AdmissionLayer, EventPayload
from gpuplane.scheduler.simulate.layers.default import DefaultLayer
from gpuplane.scheduler.simulate.model import SimJob, SimPod
from gpuplane.scheduler.simulate.quota import QuotaBook
from gpuplane.scheduler.simulate.scenario import Scenario, build_jobs
from gpuplane.scheduler.simulate.state import SimCluster
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.scheduler.simulate.autoscaler import Autoscaler

MODES = ("default", "volcano", "coscheduling", "kueue")
NOT_MANAGED_BY_KUEUE = f"not managed by Kueue: no {QUEUE_LABEL} label; scheduled by the default scheduler"

# Guard against runaway requeue loops (Kueue waitForPodsReady evictions): 30 days.
DEFAULT_HORIZON_S = 30 * 86400.0


@dataclass(slots=True)
class Options:
    scheduler: str = "default"
    autoscaler: Autoscaler | None = None
    cold_start: ColdStartModel | None = None
    scenario: Scenario | None = None
    kubernetes_version: str | None = None
    horizon_s: float = DEFAULT_HORIZON_S
    fast: bool = True


class Placement(TypedDict):
    pod: str
    node: str
    time_s: float


@dataclass(slots=True)
class Step:
    time_s: float
    events: list[dict[str, object]] = field(default_factory=list)
    gpus_allocated: int = 0
    gpus_total: int = 0
    gpus_idle_held: int = 0


class Engine:
    """One simulation run over a private copy of the cluster."""

    def __init__(
        self,
        cluster: ClusterState,
        objects: list[Manifest],
        options: Options | None = None,
        inputs: Inputs | None = None,
    ) -> None:
        """``inputs``: ``apply_inputs(cluster, objects)`` when the caller already computed it."""
        self.options = options or Options()
        if self.options.scheduler not in MODES:
            raise ValueError(f"unknown scheduler {self.options.scheduler!r} (one of {', '.join(MODES)})")
        self.inputs = inputs if inputs is not None else apply_inputs(cluster, objects)
        self.sim = SimCluster(
            cluster,
            self.options.kubernetes_version,
            fast=self.options.fast,
            objects=self.inputs.cluster_objects,
            nodes=self.inputs.nodes,
        )
        self.cold = self.options.cold_start or default_model(
            self.options.scenario.cold_start if self.options.scenario else None
        )
        index = self.sim.sched.index
        self.all_objects: list[Manifest] = [*self.inputs.cluster_objects, *self.inputs.workloads]
        self.notes: list[str] = []
        self.jobs: list[SimJob] = build_jobs(
            self.inputs.workloads,
            self.options.scenario,
            index.priority,
            kueue=self.options.scheduler == "kueue",
            notes=self.notes,
        )
        self.by_pod: dict[int, SimPod] = {id(p.pod): p for j in self.jobs for p in j.pods}
        self.quota = QuotaBook(self.sim.state)
        self.now = 0.0
        self.events: list[tuple[float, int, str, EventPayload]] = []
        self._seq = 0
        self.steps: list[Step] = []
        self.step: Step | None = None
        self.placements: list[Placement] = []
        self.fresh_nodes: set[str] = set()  # created by the autoscaler: images not cached
        self.epoch: dict[int, int] = {}  # id(job or pod) -> generation, invalidates stale finish events
        self.stopped_at_horizon = False
        self.nodes_added: list[dict[str, object]] = []
        self.preempted_gpu_s = 0.0  # work thrown away by evictions
        if self.options.scheduler == "kueue":
            # Kueue manages only workloads labelled with a LocalQueue (kueue.x-k8s.io/queue-name,
            # unless manageJobsWithoutQueueName is set); the rest go straight to kube-scheduler.
            for job in self.jobs:
                if job.kueue_queue is None:
                    self.notes.append(f"{job.key}: {NOT_MANAGED_BY_KUEUE}")
        if self.quota.skipped_scoped:
            self.notes.append(
                "scoped ResourceQuotas are not modelled: " + ", ".join(self.quota.skipped_scoped)
            )
        self.layer = self._make_layer()
        if self.options.autoscaler is not None:
            self.options.autoscaler.attach(self)
        for job in self.jobs:
            self.push(job.arrival_s, "arrive", job)

    def _make_layer(self) -> AdmissionLayer:
        # The gang and Kueue layers are imported only for the mode that needs them (start-up time).
        mode = self.options.scheduler
        if mode == "volcano":
            from gpuplane.scheduler.simulate.layers.volcano import VolcanoLayer  # deferred for start-up time

            return VolcanoLayer(self)
        if mode == "coscheduling":
            # deferred for start-up time
            from gpuplane.scheduler.simulate.layers.coscheduling import CoschedulingLayer

            return CoschedulingLayer(self)
        if mode == "kueue":
            from gpuplane.scheduler.simulate.layers.kueue import KueueLayer  # deferred for start-up time

            return KueueLayer(self)
        return DefaultLayer(self)

    # -- what layers see (layers.base.EngineView) ------------------------------------------

    @property
    def scenario(self) -> Scenario | None:
        return self.options.scenario

    @property
    def num_nodes(self) -> int:
        return self.sim.num_nodes

    def objects_of(self, kind: str, group: str) -> list[Manifest]:
        return [o for o in self.all_objects if o.kind == kind and o.group == group]

    def track_pods(self, pods: list[SimPod]) -> None:
        self.by_pod.update({id(p.pod): p for p in pods})

    def release_quota(self, pod: SimPod) -> None:
        self.quota.release(pod.pod)

    def schedule(self, pod: SimPod) -> ScheduleResult | FitError:
        return self.sim.schedule(pod.pod)

    # -- events ----------------------------------------------------------------------------

    def push(self, time_s: float, kind: str, payload: EventPayload) -> None:
        """Queue an event. The engine's own kinds and payloads: ``arrive`` (SimJob),
        ``pod-finish`` / ``running`` ((SimPod, epoch)), ``job-finish`` ((SimJob, epoch)),
        ``node-ready`` (the autoscaler's in-flight record); any other kind goes to the layer."""
        self._seq += 1
        heapq.heappush(self.events, (time_s, self._seq, kind, payload))

    def log(self, kind: str, **fields: object) -> None:
        assert self.step is not None
        self.step.events.append({"type": kind, **fields})

    def run(self) -> Engine:
        while self.events:
            t = self.events[0][0]
            if t > self.options.horizon_s:
                self.stopped_at_horizon = True
                break
            self.now = t
            self.step = Step(t)
            while self.events and self.events[0][0] == t:
                _, _, kind, payload = heapq.heappop(self.events)
                self._apply(kind, payload)
            self._schedule_until_stable()
            scaler = self.options.autoscaler
            if scaler is not None:
                waiting = [p for p in self.pending_pods() if p.node is None]
                if waiting:
                    scaler.scale_up(self, waiting)
            if self.step.events:
                self._close_step()
        self.refresh_messages()
        return self

    def refresh_messages(self) -> None:
        """Exact kube-scheduler text for pods the default scheduler left Pending at the end."""
        if self.options.scheduler not in ("default", "kueue"):
            return
        for pod in self.pending_pods():
            if pod.node is None:
                result = self.sim.sched.schedule_one(pod.pod)
                if isinstance(result, FitError):
                    pod.message = result.message()

    def _apply(self, kind: str, payload: EventPayload) -> None:
        if kind == "arrive":
            job = cast(SimJob, payload)
            self.log("arrived", job=job.key, pods=len(job.pods))
            self.layer.on_arrival(job)
        elif kind == "pod-finish":
            pod, gen = cast(tuple[SimPod, int], payload)
            if self.epoch.get(id(pod), 0) == gen and pod.node is not None:
                self._finish_pod(pod)
        elif kind == "job-finish":
            job, gen = cast(tuple[SimJob, int], payload)
            if self.epoch.get(id(job), 0) == gen and job.finished_s is None:
                for pod in job.pods:
                    if pod.node is not None and pod.finished_s is None:
                        self._finish_pod(pod, quiet=True)
                job.finished_s = self.now
                self.log("job-completed", job=job.key)
                self.layer.on_job_finished(job)
        elif kind == "running":
            pod, gen = cast(tuple[SimPod, int], payload)
            if self.epoch.get(id(pod), 0) == gen and pod.node is not None:
                self.log("running", pod=pod.key, node=pod.node)
                self._pod_running(pod)
        elif kind == "node-ready":
            assert self.options.autoscaler is not None
            self.options.autoscaler.node_ready(self, cast(dict[str, object], payload))
        else:
            self.layer.on_event(kind, payload)

    def _schedule_until_stable(self) -> None:
        for _ in range(10_000):
            if not self.layer.schedule_pass():
                return

    def _close_step(self) -> None:
        step = self.step
        assert step is not None
        step.gpus_total, step.gpus_allocated = self.gpu_counts()
        step.gpus_idle_held = self.gpus_idle_held()
        self.steps.append(step)
        self.step = None

    # -- GPU accounting --------------------------------------------------------------------

    def gpu_counts(self) -> tuple[int, int]:
        index = self.sim.sched.index
        total = allocated = 0
        for name, row in index.resource_index.items():
            if is_gpu_resource(name):
                total += _exact_sum(index.alloc[row])
                allocated += _exact_sum(index.req[row])
        return total, allocated

    def gpus_idle_held(self) -> int:
        held = 0
        for job in self.jobs:
            if job.finished_s is not None:
                continue
            for pod in job.pods:
                if pod.node is None:
                    continue
                if self.useful_since(pod) is None:
                    held += pod.gpus
        return held

    def useful_since(self, pod: SimPod) -> float | None:
        """Since when a placed pod's GPUs do work: its container start, or for a distributed job
        the later of that and the job's start; None while it only holds them (Permit, image
        pull, gang not complete)."""
        if pod.waiting_permit or pod.running_s is None:
            return None
        job = pod.job
        if not job.distributed:
            return pod.running_s
        if job.started_s is None:
            return None
        return max(pod.running_s, job.started_s)

    def _lose_work(self, pods: list[SimPod]) -> None:
        for pod in pods:
            since = self.useful_since(pod)
            if since is not None and pod.node is not None and pod.finished_s is None:
                self.preempted_gpu_s += pod.gpus * (self.now - since)

    # -- pod lifecycle ---------------------------------------------------------------------

    def pending_pods(self) -> list[SimPod]:
        """Created, unplaced pods in scheduling-queue order (PrioritySort: priority, then the pod's
        creation time). Controllers of jobs submitted together create their pods concurrently,
        so equal-time pods interleave by replica index, then submission order."""
        out = [
            p
            for j in self.jobs
            if j.arrival_s <= self.now and j.finished_s is None
            for p in j.pods
            if p.node is None and p.created
        ]
        out.sort(key=lambda p: (-p.job.priority, p.job.arrival_s, p.seq, p.job.order))
        return out

    def create_pods(self, job: SimJob) -> bool:
        """ResourceQuota admission for the job's not-yet-created pods (controllers retry)."""
        progress = False
        for pod in job.pods:
            if pod.created or pod.finished_s is not None:
                continue
            if pod.refusal:  # API validation runs before admission: never created, never charged
                if pod.message != pod.refusal:
                    pod.message = pod.refusal
                    self.log("create-refused", pod=pod.key, message=pod.refusal)
                continue
            refusal = self.quota.admit(pod.pod)
            if refusal:
                if pod.message != refusal:
                    pod.message = refusal
                    self.log("create-refused", pod=pod.key, message=refusal)
                if job.kind == "Pod" and job.group == "":
                    # a bare Pod: the 403 goes back to its creator, nobody retries
                    pod.refusal = refusal
                continue
            pod.created = True
            job.remember(pod.message)
            pod.message = ""
            progress = True
        return progress

    def try_schedule(self, pod: SimPod, *, preempt: bool = True) -> ScheduleResult | FitError:
        """One cycle for ``pod``; binds on success. With ``preempt``, DefaultPreemption's victims
        are evicted and the pod placed on the nominated node (graceful termination not modelled)."""
        if preempt:
            result, outcome = self.sim.schedule_or_preempt(pod.pod)
        else:
            result, outcome = self.sim.schedule(pod.pod), None
        if isinstance(result, ScheduleResult):
            self.bind(pod, result.node)
            return result
        if outcome is not None and outcome.nominated_node is not None:
            # The victims are deleted; the pod is retried (upstream: next cycle, nominated node).
            for victim in outcome.victims:
                self.evict(victim, by=pod)
            again = self.sim.schedule(pod.pod)
            if isinstance(again, ScheduleResult):
                self.bind(pod, again.node)
                return again
            result = again
        assert isinstance(result, FitError)
        pod.message = result.message()
        return result

    def bind(self, pod: SimPod, node: str, *, waiting: bool = False) -> None:
        self.sim.bind(pod.pod, node)
        pod.node = node
        pod.waiting_permit = waiting
        if not waiting:
            self.confirm(pod)

    def confirm(self, pod: SimPod) -> None:
        """The pod is bound (after Permit): record it and start its containers."""
        assert pod.node is not None
        pod.waiting_permit = False
        pod.bound_s = self.now
        pod.job.remember(pod.message)
        pod.message = ""
        self.placements.append({"pod": pod.key, "node": pod.node, "time_s": self.now})
        self.log("bound", pod=pod.key, node=pod.node)
        pull = self.cold.image_pull(pod.job.image_gib) if pod.node in self.fresh_nodes else 0.0
        gen = self.epoch.get(id(pod), 0)
        if pull > 0:
            self.push(self.now + pull, "running", (pod, gen))
        else:
            self._pod_running(pod)

    def _pod_running(self, pod: SimPod) -> None:
        pod.running_s = self.now
        job = pod.job
        if job.duration_s is None:
            return
        if not job.distributed:
            if job.started_s is None:
                job.started_s = self.now
            self._push_pod_finish(pod)
            return
        if job.started_s is not None:
            if not job.gang_of_all:  # a pod after the gang: its own share of the work
                self._push_pod_finish(pod)
            return
        running = [p for p in job.pods if p.running_s is not None and p.node is not None]
        if len(running) < job.min_member:
            return
        job.started_s = self.now
        self.log("job-started", job=job.key, ends_s=self.now + job.duration_s)
        if job.gang_of_all:
            self.push(self.now + job.duration_s, "job-finish", (job, self.epoch.get(id(job), 0)))
        else:
            for member in running:
                self._push_pod_finish(member)

    def _push_pod_finish(self, pod: SimPod) -> None:
        assert pod.job.duration_s is not None
        self.push(self.now + pod.job.duration_s, "pod-finish", (pod, self.epoch.get(id(pod), 0)))

    def unplace(self, pod: SimPod) -> None:
        """Take a placed pod off its node (rollback, eviction), back to Pending."""
        if pod.node is None:
            return
        job = pod.job
        if job.distributed and job.started_s is not None and job.gang_of_all:
            self._lose_work(job.pods)  # the gang's clock restarts: all of its work is lost
        else:
            self._lose_work([pod])
        self.sim.forget(pod.pod, pod.node)
        pod.node = None
        pod.bound_s = None
        pod.running_s = None
        pod.waiting_permit = False
        self.epoch[id(pod)] = self.epoch.get(id(pod), 0) + 1
        if job.distributed and job.started_s is not None and job.gang_of_all:
            job.started_s = None
            self.epoch[id(job)] = self.epoch.get(id(job), 0) + 1

    def evict(self, victim: Pod, by: SimPod | None = None) -> None:
        """A preemption victim: a simulated pod goes back to Pending; a pod of the snapshot is deleted."""
        sim_pod = self.by_pod.get(id(victim))
        who = by.key if by is not None else None
        if sim_pod is not None:
            node = sim_pod.node
            self.unplace(sim_pod)
            sim_pod.job.evictions += 1
            self.log("preempted", pod=sim_pod.key, node=node, by=who)
            return
        node = victim.spec.node_name
        info_node = next(
            (i.name for i in self.sim.sched.index.node_infos if any(p is victim for p in i.pods)), node
        )
        if info_node:
            self.sim.forget(victim, info_node)
            self.quota.release(victim)
            self.log("preempted", pod=victim.key, node=info_node, by=who)

    def _finish_pod(self, pod: SimPod, quiet: bool = False) -> None:
        node = pod.node
        assert node is not None
        self.sim.forget(pod.pod, node)
        self.quota.release(pod.pod)
        pod.finished_s = self.now
        if not quiet:
            self.log("completed", pod=pod.key, node=node)
        job = pod.job
        per_pod = not job.distributed or not job.gang_of_all
        if per_pod and job.finished_s is None and all(p.finished_s is not None for p in job.pods):
            job.finished_s = self.now
            self.log("job-completed", job=job.key)
            self.layer.on_job_finished(job)

    def autoscaler_name(self) -> str | None:
        scaler = self.options.autoscaler
        return scaler.kind if scaler is not None else None

    # -- results ---------------------------------------------------------------------------

    def deadlock(self) -> dict[str, object] | None:
        """Jobs partly placed that can never start (no event left to change anything)."""
        if self.events and not self.stopped_at_horizon:
            return None
        stuck = []
        for job in self.jobs:
            if job.finished_s is not None or not job.distributed or job.started_s is not None:
                continue
            placed = [p for p in job.pods if p.node is not None]
            if placed and len(placed) < len(job.pods):
                stuck.append((job, placed))
        if not stuck:
            return None
        held = sum(p.gpus for _, placed in stuck for p in placed)
        advice = "A gang scheduler (Volcano, coscheduling) or Kueue admission places such jobs all-or-nothing"
        unmanaged = [job.key for job, _ in stuck if job.kueue_queue is None]
        if self.options.scheduler == "kueue" and unmanaged:
            advice = (
                f"Kueue admits a job all-or-nothing only when it carries the {QUEUE_LABEL} label: add it "
                f"(the name of a LocalQueue in the job's namespace) to {', '.join(unmanaged)}"
            )
        return {
            "jobs": [
                {
                    "job": job.key,
                    "pods_placed": [f"{p.key} -> {p.node}" for p in placed],
                    "pods_pending": [p.key for p in job.pods if p.node is None],
                    "gpus_held": sum(p.gpus for p in placed),
                }
                for job, placed in stuck
            ],
            "pods_held": sum(len(placed) for _, placed in stuck),
            "gpus_held_idle": held,
            "message": (
                f"deadlock: {len(stuck)} distributed job(s) are partly placed and none can start; "
                f"{held} GPU(s) are held idle. {advice}"
            ),
        }


def _exact_sum(values: np.ndarray) -> int:
    """The sum of an int64 row without wrapping: numpy's sum when no overflow is possible,
    Python ints otherwise (a node advertising a saturated int64 quantity)."""
    if len(values) == 0:
        return 0
    if int(abs(values).max()) <= _SAFE_SUM_LIMIT // len(values):
        return int(values.sum())
    return sum(values.tolist())


_SAFE_SUM_LIMIT = (1 << 63) - 1
