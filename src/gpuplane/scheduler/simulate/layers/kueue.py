"""Kueue admission in front of kube-scheduler: quota per flavor, cohorts, preemption, waitForPodsReady.

Kueue decides *whether a workload may start*; its pods then go through kube-scheduler
(reference/scheduling.md §4.4, kubernetes-sigs/kueue ``pkg/scheduler``). Modelled here:

- a workload labelled ``kueue.x-k8s.io/queue-name`` waits (job suspended, no pods) until its
  LocalQueue's ClusterQueue reserves quota for *all* its pods (all-or-nothing admission);
  workloads are taken by priority, then creation (``BestEffortFIFO``);
- flavor assignment per pod set (``flavorassigner.go``): within the resource group covering a
  resource, the first flavor in order whose ``nodeLabels`` agree with the pod's nodeSelector,
  whose ``nodeTaints`` the pod tolerates and whose quota has room; the flavor's labels are then
  injected as nodeSelector and its ``tolerations`` added to the pods;
- quota: ``nominalQuota``; in a cohort, borrowing of what other members lend (``lendingLimit``,
  else their nominal) up to ``borrowingLimit``;
- failure texts: ``couldn't assign flavors to pod set <ps>: <reasons>`` with ``insufficient
  unused quota for %s in flavor %s, %s more needed``, ``insufficient quota for %s in flavor %s,
  previously considered podsets requests (%s) + current podset request (%s) > maximum capacity
  (%s)`` (Kueue >= v0.15), ``resource %s unavailable in ClusterQueue``, ``flavor %s doesn't
  match node affinity``, ``untolerated taint %s in flavor %s``; ``LocalQueue %s doesn't exist``,
  ``ClusterQueue %s doesn't exist``;
- preemption ``withinClusterQueue: LowerPriority`` (evict the fewest lower-priority admitted
  workloads of the same ClusterQueue, lowest priority and newest first, when that makes room);
- ``waitForPodsReady`` (on by default with a 30 min timeout since Kueue v0.19, PR #11855): an
  admitted workload whose pods are not all running in time is evicted (``PodsReadyTimeout``)
  and requeued after ``backoffBaseSeconds`` (60) x 2^(n-1), capped at 3600 s.
Not modelled: reclaimWithinCohort / borrowWithinCohort preemption, fair sharing, TAS,
admission checks, partial admission.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import msgspec

from gpuplane.k8s.cluster import parse_resource_list
from gpuplane.k8s.objects import Pod, Taint, Toleration
from gpuplane.k8s.requests import pod_requests
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.scheduler.simulate.layers.base import EngineView, EventPayload
from gpuplane.scheduler.simulate.layers.default import DefaultLayer
from gpuplane.scheduler.simulate.model import SimJob
from gpuplane.scheduler.simulate.quota import format_amount
from gpuplane.scheduler.simulate.scenario import make_pods

GROUP = "kueue.x-k8s.io"
DEFAULT_PODS_READY_TIMEOUT_S = 1800.0
BACKOFF_BASE_S = 60.0
BACKOFF_MAX_S = 3600.0

Usage = dict[str, Counter]  # cluster queue -> Counter[(flavor, resource)]


def podset_name(job: SimJob, ps_name: str) -> str:
    """The name Kueue gives a pod set in the workload's ``podSets``: ``main`` for a batch Job and
    a plain Pod (``kueue.DefaultPodSetName``; kubernetes-sigs/kueue
    ``pkg/controller/jobs/job/job_controller.go`` and ``.../jobs/pod/pod_controller.go``
    ``PodSets``), else the replica type lower-cased / replicatedJob / worker group name the
    expansion already uses (reference/scheduling.md §4.4 PodSet mapping)."""
    if (job.group, job.kind) in (("batch", "Job"), ("batch", "CronJob"), ("", "Pod")):
        return "main"
    return ps_name


@dataclass(frozen=True, slots=True)
class PodsReadyCheck:
    """The event when an admitted workload's waitForPodsReady timeout expires."""

    job: SimJob
    admitted_s: float


def _taint_text(taint: dict[str, Any]) -> str:
    """``v1.Taint.ToString()``: ``key=value:Effect`` (``key:Effect`` without a value)."""
    key = taint.get("key", "")
    value = taint.get("value")
    effect = taint.get("effect", "")
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


class KueueLayer(DefaultLayer):
    """Quota admission (module docstring), then kube-scheduler for admitted pods."""

    def __init__(self, engine: EngineView) -> None:
        super().__init__(engine)
        objs = [
            o
            for kind in ("LocalQueue", "ResourceFlavor", "ClusterQueue")
            for o in engine.objects_of(kind, GROUP)
        ]
        self.local_queues: dict[tuple[str, str | None], Any] = {
            (o.namespace or "default", o.name): o.get("spec", "clusterQueue")
            for o in objs
            if o.kind == "LocalQueue"
        }
        self.flavors = {o.name: o.get("spec") or {} for o in objs if o.kind == "ResourceFlavor"}
        self.cqs: dict[str, dict[str, Any]] = {}
        for o in objs:
            if o.kind != "ClusterQueue":
                continue
            spec = o.get("spec") or {}
            groups = []
            for rg in spec.get("resourceGroups") or []:
                flavors = []
                for fl in rg.get("flavors") or []:
                    quotas = {}
                    for res in fl.get("resources") or []:
                        name = res.get("name")
                        parsed = {
                            k: parse_resource_list({name: res[k]}).get(name)
                            for k in ("nominalQuota", "borrowingLimit", "lendingLimit")
                            if k in res
                        }
                        quotas[name] = (
                            parsed.get("nominalQuota") or 0,
                            parsed.get("borrowingLimit"),
                            parsed.get("lendingLimit"),
                        )
                    flavors.append((fl.get("name"), quotas))
                groups.append((set(rg.get("coveredResources") or []), flavors))
            preemption = spec.get("preemption") or {}
            self.cqs[o.name] = {
                "cohort": spec.get("cohortName") or spec.get("cohort"),
                "groups": groups,
                "within": preemption.get("withinClusterQueue", "Never"),
            }
        self.usage: Usage = {name: Counter() for name in self.cqs}
        settings = engine.scenario.kueue if engine.scenario else {}
        wfpr = settings.get("waitForPodsReady", {"timeoutSeconds": DEFAULT_PODS_READY_TIMEOUT_S})
        self.pods_ready_timeout = (
            float(wfpr.get("timeoutSeconds", DEFAULT_PODS_READY_TIMEOUT_S)) if wfpr else None
        )
        self.admitted: dict[int, tuple[str, Counter]] = {}  # id(job) -> (cq, charged usage)
        self.not_before: dict[int, float] = {}
        self.original: dict[int, list[tuple[str, int, Pod]]] = {}

    # -- lifecycle -------------------------------------------------------------------------

    def managed(self, job: SimJob) -> bool:
        return job.kueue_queue is not None

    def may_create(self, job: SimJob) -> bool:
        return not self.managed(job) or job.admitted_s is not None

    def on_job_finished(self, job: SimJob) -> None:
        admitted = self.admitted.pop(id(job), None)
        if admitted is not None:
            self.usage[admitted[0]] -= admitted[1]

    def on_event(self, kind: str, payload: EventPayload) -> None:
        if kind == "pods-ready-timeout" and isinstance(payload, PodsReadyCheck):
            job = payload.job
            if job.finished_s is not None or job.admitted_s != payload.admitted_s:
                return
            if all(p.running_s is not None for p in job.pods):
                return
            self._evict(
                job, f"Exceeded the PodsReady timeout {job.namespace}/{job.name}", "pods-ready-timeout"
            )
            backoff = min(BACKOFF_BASE_S * 2 ** (job.evictions - 1), BACKOFF_MAX_S)
            self.not_before[id(job)] = self.engine.now + backoff
            self.engine.push(self.engine.now + backoff, "requeue", job)
        elif kind == "requeue" and isinstance(payload, SimJob):
            self.engine.log("requeued", job=payload.key)

    def _evict(self, job: SimJob, message: str, event: str) -> None:
        engine = self.engine
        for pod in job.pods:
            engine.unplace(pod)
            if pod.created:
                engine.release_quota(pod)
        admitted = self.admitted.pop(id(job), None)
        if admitted is not None:
            self.usage[admitted[0]] -= admitted[1]
        job.admitted_s = None
        job.started_s = None
        job.evictions += 1
        job.message = message
        make_pods(job)
        engine.track_pods(job.pods)
        engine.log(event, job=job.key, message=message)

    # -- admission -------------------------------------------------------------------------

    def schedule_pass(self) -> bool:
        engine = self.engine
        progress = False
        waiting = [
            j
            for j in engine.jobs
            if self.managed(j)
            and j.arrival_s <= engine.now
            and j.finished_s is None
            and j.admitted_s is None
            and self.not_before.get(id(j), 0.0) <= engine.now
        ]
        waiting.sort(key=lambda j: (-j.priority, j.arrival_s, j.order))
        for job in waiting:
            progress |= self._try_admit(job)
        return super().schedule_pass() or progress

    def _try_admit(self, job: SimJob) -> bool:
        engine = self.engine
        cq_name = self.local_queues.get((job.namespace, job.kueue_queue))
        if cq_name is None:
            job.message = f"LocalQueue {job.kueue_queue} doesn't exist"
        elif cq_name not in self.cqs:
            job.message = f"ClusterQueue {cq_name} doesn't exist"
        if cq_name is None or cq_name not in self.cqs:
            for pod in job.pods:
                pod.message = job.message
            return False
        assignment, charge, message = self._assign(job, cq_name, self.usage)
        victims: list[SimJob] = []
        if assignment is None and self.cqs[cq_name]["within"] in (
            "LowerPriority",
            "LowerOrNewerEqualPriority",
        ):
            victims = self._preemption_set(job, cq_name)
        if assignment is None and victims:
            for victim in victims:
                self._evict(
                    victim,
                    f"Preempted to accommodate a workload due to prioritization in the ClusterQueue "
                    f"(preemptor {job.key})",
                    "kueue-preempted",
                )
            assignment, charge, message = self._assign(job, cq_name, self.usage)
        if assignment is None:
            if job.message != message:
                engine.log("quota-pending", job=job.key, message=message)
            job.message = message
            for pod in job.pods:
                pod.message = message
            return False
        self.usage[cq_name] += charge
        self.admitted[id(job)] = (cq_name, charge)
        job.flavor = assignment
        job.admitted_s = engine.now
        job.remember(job.message)
        job.message = ""
        self._inject(job, assignment)
        engine.log("admitted", job=job.key, cluster_queue=cq_name, flavors=dict(assignment))
        engine.create_pods(job)
        if self.pods_ready_timeout is not None:
            engine.push(
                engine.now + self.pods_ready_timeout, "pods-ready-timeout", PodsReadyCheck(job, engine.now)
            )
        return True

    def _preemption_set(self, job: SimJob, cq_name: str) -> list[SimJob]:
        """Fewest lower-priority admitted workloads of the ClusterQueue whose removal admits ``job``."""
        candidates = [
            j
            for j in self.engine.jobs
            if id(j) in self.admitted and self.admitted[id(j)][0] == cq_name and j.priority < job.priority
        ]
        candidates.sort(key=lambda j: (j.priority, -(j.admitted_s or 0.0), -j.order))
        trial = {k: Counter(v) for k, v in self.usage.items()}
        chosen: list[SimJob] = []
        for victim in candidates:
            trial[cq_name] -= self.admitted[id(victim)][1]
            chosen.append(victim)
            if self._assign(job, cq_name, trial)[0] is not None:
                return chosen
        return []

    def _pod_matches(self, template: Pod, flavor: str) -> str:
        spec = self.flavors.get(flavor)
        if spec is None:
            return f"flavor {flavor} not found"
        labels = spec.get("nodeLabels") or {}
        selector = template.spec.node_selector
        for key, val in labels.items():
            if key in selector and selector[key] != val:
                return f"flavor {flavor} doesn't match node affinity"
        taints = [t for t in spec.get("nodeTaints") or [] if isinstance(t, dict)]
        if taints:
            typed = [msgspec.convert(t, Taint, strict=False) for t in taints]
            bad = find_untolerated_taint(
                typed, template.spec.tolerations, effects=("NoSchedule", "NoExecute")
            )
            if bad is not None:
                raw_bad = next(t for t in taints if t.get("key") == bad.key)
                return f"untolerated taint {_taint_text(raw_bad)} in flavor {flavor}"
        return ""

    def _capacity(
        self, cq_name: str, flavor: str, res: str, usage: Usage
    ) -> tuple[int, int, int, int] | None:
        """(used, max capacity for this CQ, cohort used, cohort capacity) or None if not covered."""
        cq = self.cqs[cq_name]
        quota = self._quota(cq_name, flavor, res)
        if quota is None:
            return None
        nominal, borrow, _ = quota
        used = usage[cq_name][(flavor, res)]
        cohort = cq["cohort"]
        if not cohort:
            return used, nominal, used, nominal
        cap = nominal
        cohort_used = used
        for other, info in self.cqs.items():
            if other == cq_name or info["cohort"] != cohort:
                continue
            q = self._quota(other, flavor, res)
            if q is None:
                continue
            o_nominal, _, o_lend = q
            lendable = o_nominal if o_lend is None else min(o_lend, o_nominal)
            cap += lendable
            cohort_used += max(0, usage[other][(flavor, res)] - (o_nominal - lendable))
        max_cap = cap if borrow is None else min(cap, nominal + borrow)
        return used, max_cap, cohort_used, cap

    def _quota(self, cq_name: str, flavor: str, res: str) -> tuple[int, int | None, int | None] | None:
        for covered, flavors in self.cqs[cq_name]["groups"]:
            if res in covered:
                for name, quotas in flavors:
                    if name == flavor:
                        return quotas.get(res, (0, None, None))
        return None

    def _assign(self, job: SimJob, cq_name: str, usage: Usage) -> tuple[dict[str, str] | None, Counter, str]:
        cq = self.cqs[cq_name]
        considered: Counter = Counter()
        assignment: dict[str, str] = {}
        failures: list[str] = []
        for ps_name, count, template in job.podsets:
            try:
                per_pod = pod_requests(template)
            except (ValueError, TypeError):
                per_pod = {}
            request = {r: v * count for r, v in per_pod.items() if v > 0 and r != "pods"}
            reasons: list[str] = []
            chosen: dict[str, str] = {}
            for res in sorted(request):
                group = next((g for g in cq["groups"] if res in g[0]), None)
                if group is None:
                    reasons.append(f"resource {res} unavailable in ClusterQueue")
                    continue
                if res in chosen:
                    continue
                wanted = sorted(r for r in request if r in group[0])
                for flavor, _ in group[1]:
                    mismatch = self._pod_matches(template, flavor)
                    if mismatch:
                        reasons.append(mismatch)
                        continue
                    short = []
                    for r in wanted:
                        cap = self._capacity(cq_name, flavor, r, usage)
                        if cap is None:
                            short.append(f"flavor {flavor} does not provide resource {r}")
                            continue
                        used, max_cap, cohort_used, cohort_cap = cap
                        prev = considered[(flavor, r)]
                        x = request[r]
                        if prev + x > max_cap:
                            short.append(
                                f"insufficient quota for {r} in flavor {flavor}, previously considered podsets "
                                f"requests ({format_amount(r, prev)}) + current podset request "
                                f"({format_amount(r, x)}) > maximum capacity ({format_amount(r, max_cap)})"
                            )
                            continue
                        need = max(used + prev + x - max_cap, cohort_used + prev + x - cohort_cap)
                        if need > 0:
                            short.append(
                                f"insufficient unused quota for {r} in flavor {flavor}, {format_amount(r, need)} more needed"
                            )
                    if short:
                        reasons.extend(short)
                        continue
                    for r in wanted:
                        chosen[r] = flavor
                    break
            if reasons and len(chosen) < len(request):
                failures.append(
                    f"couldn't assign flavors to pod set {podset_name(job, ps_name)}: {', '.join(sorted(set(reasons)))}"
                )
                continue
            for r, flavor in chosen.items():
                considered[(flavor, r)] += request[r]
                assignment[r] = flavor
        if failures:
            return None, Counter(), "; ".join(failures)
        return assignment, considered, ""

    def _inject(self, job: SimJob, assignment: dict[str, str]) -> None:
        """Admitted: the flavors' nodeLabels become nodeSelector, their tolerations are added."""
        labels: dict[str, str] = {}
        tolerations: list[Toleration] = []
        for flavor in dict.fromkeys(assignment.values()):
            spec = self.flavors.get(flavor) or {}
            labels.update(spec.get("nodeLabels") or {})
            for raw in spec.get("tolerations") or []:
                tolerations.append(msgspec.convert(raw, Toleration, strict=False))
        if not labels and not tolerations:
            return
        podsets = []
        for name, count, template in self.original.setdefault(id(job), job.podsets):
            spec = msgspec.structs.replace(
                template.spec,
                node_selector={**template.spec.node_selector, **labels},
                tolerations=[*template.spec.tolerations, *tolerations],
            )
            podsets.append((name, count, msgspec.structs.replace(template, spec=spec)))
        job.podsets = podsets
        make_pods(job)
        self.engine.track_pods(job.pods)
