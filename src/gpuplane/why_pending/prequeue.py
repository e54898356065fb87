"""Why a pod (or a workload's pods) never reaches kube-scheduler's Filter stage.

Before the scheduler: scheduling gates (the API server stamps ``PodScheduled=False`` /
``SchedulingGated`` / ``Scheduling is blocked due to non-empty scheduling gates``,
kubernetes/kubernetes pkg/registry/core/pod/strategy.go), a ``schedulerName`` no running
scheduler answers to, a gang (Volcano / coscheduling PodGroup) short of its minimum
members, a Kueue workload not admitted (its Job stays suspended, no pod exists), a
ResourceQuota that refuses the controller's pods, and a nomination left by preemption.
Texts of the other systems come from reference/scheduling.md §4 (Volcano
``plugins/gang/gang.go``, scheduler-plugins ``pkg/coscheduling/core/core.go``, Kueue
``pkg/scheduler/flavorassigner/flavorassigner.go``, kube-apiserver resourcequota admission).
"""

from __future__ import annotations

import weakref

from gpuplane.k8s.cluster import ClusterState
from gpuplane.k8s.objects import Pod
from gpuplane.k8s.schedulers import RunningSchedulers
from gpuplane.k8s.wellknown import (
    COSCHEDULING_LABELS,
    KUEUE_ADMISSION_GATE,
    KUEUE_QUEUE_LABEL,
    KUEUE_TOPOLOGY_GATE,
    VOLCANO_GROUP_ANNOTATION,
)
from gpuplane.scheduler.framework import Status
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.sources.manifest import Manifest
from gpuplane.why_pending.model import RANK_DECISIVE, Cause, Explanation

# pkg/registry/core/pod/strategy.go (PodScheduled condition of a gated pod)
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
# scheduler-plugins pkg/coscheduling/core/core.go PreFilter
COSCHEDULING_NOT_ENOUGH = (
    "pre-filter pod {} cannot find enough sibling pods, current pods number: {}, minMember of group: {}"
)
TERMINAL = ("Succeeded", "Failed")


def _explanation(pod: Pod, message: str, stage: str) -> Explanation:
    return Explanation(pod, message, stage=stage)


def _add(expl: Explanation, kind: str, text: str, subject: str = "") -> None:
    """A pre-queue cause: it stops the pod before any node is checked (no node count)."""
    expl.causes.append(Cause(kind, RANK_DECISIVE, 0, text, subject=subject))


# The cause kind of a Volcano gang with members already placed (gpu_causes refines its text),
# and the words its text starts with.
GANG = "gang"
VOLCANO_GANG = "Volcano gang "


def scheduler_running(sched: Scheduler, name: str) -> bool:
    """Is a scheduler called ``name`` running? (:class:`gpuplane.k8s.schedulers.RunningSchedulers`,
    the one answer lint and why-pending share; gathered once per cluster)."""
    cluster = sched.cluster
    running = _RUNNING.get(cluster)
    if running is None:
        running = RunningSchedulers(cluster.pods, configmaps=cluster.by_kind("ConfigMap", ""))
        _RUNNING[cluster] = running
    return name in running


_RUNNING: weakref.WeakKeyDictionary[ClusterState, RunningSchedulers] = weakref.WeakKeyDictionary()


class _GangIndex:
    """The cluster's PodGroups by (kind group, namespace, name) and its gang members counted per
    (mechanism, namespace, group name), gathered in one pass: every Pending gang member asks, and a
    walk over the cluster's pods per question would cost pending x pods."""

    __slots__ = ("members", "pod_groups")

    def __init__(self, cluster: ClusterState) -> None:
        self.pod_groups: dict[tuple[str, str, str], Manifest] = {}
        for group in ("scheduling.volcano.sh", "scheduling.x-k8s.io"):
            for pg in cluster.by_kind("PodGroup", group):
                self.pod_groups.setdefault((group, pg.namespace or "default", pg.name), pg)
        # (mechanism, namespace, group name) -> [non-terminal members, of which bound to a node]
        self.members: dict[tuple[str, str, str], list[int]] = {}
        for other in cluster.pods:
            if other.status.phase in TERMINAL:
                continue
            ns = other.metadata.namespace or "default"
            names: list[tuple[str, str]] = []
            volcano = other.metadata.annotations.get(VOLCANO_GROUP_ANNOTATION)
            if volcano is not None:
                names.append(("volcano", volcano))
            labels = other.metadata.labels
            for value in dict.fromkeys(labels[label] for label in COSCHEDULING_LABELS if label in labels):
                names.append(("coscheduling", value))
            for mechanism, name in names:
                counts = self.members.setdefault((mechanism, ns, name), [0, 0])
                counts[0] += 1
                if other.spec.node_name:
                    counts[1] += 1


_GANGS: weakref.WeakKeyDictionary[ClusterState, _GangIndex] = weakref.WeakKeyDictionary()


def _gangs(sched: Scheduler) -> _GangIndex:
    cluster = sched.cluster
    found = _GANGS.get(cluster)
    if found is None:
        found = _GANGS[cluster] = _GangIndex(cluster)
    return found


def pod_group_of(sched: Scheduler, pod: Pod) -> tuple[str, Manifest | None, str]:
    """(mechanism, PodGroup object, group name) for a gang member, else ("", None, "")."""
    ns = pod.metadata.namespace or "default"
    name = pod.metadata.annotations.get(VOLCANO_GROUP_ANNOTATION)
    if name:
        return "volcano", _gangs(sched).pod_groups.get(("scheduling.volcano.sh", ns, name)), name
    for label in COSCHEDULING_LABELS:
        name = pod.metadata.labels.get(label)
        if name:
            return "coscheduling", _gangs(sched).pod_groups.get(("scheduling.x-k8s.io", ns, name)), name
    return "", None, ""


def gang_members(sched: Scheduler, mechanism: str, name: str, ns: str) -> tuple[int, int]:
    """(existing non-terminal member pods, of which bound to a node)."""
    total, bound = _gangs(sched).members.get((mechanism, ns, name), (0, 0))
    return total, bound


def prequeue_explanation(sched: Scheduler, pod: Pod) -> Explanation | None:
    """An Explanation when the pod is stopped before kube-scheduler's filters (stage != scheduler),
    one with extra causes (stage == scheduler), or None."""
    gates = [g.name for g in pod.spec.scheduling_gates]
    if gates:
        expl = _explanation(pod, GATED_MESSAGE, "gated")
        _add(
            expl,
            "gated",
            f"the pod has scheduling gates {gates}: it never enters the scheduling queue until they are removed",
        )
        if KUEUE_ADMISSION_GATE in gates:
            queue = pod.metadata.labels.get(KUEUE_QUEUE_LABEL, "")
            _add(
                expl,
                "kueue-gate",
                f"Kueue holds it behind the gate {KUEUE_ADMISSION_GATE} until its Workload is admitted"
                + (f" by LocalQueue {queue!r}" if queue else "")
                + "; the reason is on the Workload (kubectl get workloads -n "
                + f"{pod.metadata.namespace or 'default'} -o wide)",
            )
        if KUEUE_TOPOLOGY_GATE in gates:
            _add(
                expl,
                "kueue-topology",
                "Kueue topology-aware scheduling has not assigned this pod's topology domain yet",
            )
        other = [g for g in gates if not g.startswith("kueue.x-k8s.io/")]
        if other:
            expl.fixes.append(
                f"kubectl patch pod {pod.metadata.name} -n {pod.metadata.namespace or 'default'} --type json "
                '-p \'[{"op":"remove","path":"/spec/schedulingGates"}]\'  # once what the gate waits for is done'
            )
        return expl
    scheduler_name = pod.spec.scheduler_name or "default-scheduler"
    if not scheduler_running(sched, scheduler_name):
        expl = _explanation(pod, "", "other-scheduler")
        _add(
            expl,
            "other-scheduler",
            f"schedulerName is {scheduler_name!r} but no scheduler of that name runs in the cluster: "
            "no scheduler will ever pick this pod up, so there is no FailedScheduling event",
        )
        expl.fixes.append(
            f"install the {scheduler_name} scheduler, or set `spec.schedulerName: default-scheduler` in the pod template"
        )
        return expl
    ns = pod.metadata.namespace or "default"
    mechanism, pg, group = pod_group_of(sched, pod)
    if mechanism:
        total, bound = gang_members(sched, mechanism, group, ns)
        min_member = int(pg.get("spec", "minMember", default=1) or 1) if pg is not None else None
        if pg is None:
            expl = _explanation(pod, "", "gang")
            _add(
                expl,
                "podgroup-missing",
                f"the pod belongs to {mechanism} PodGroup {ns}/{group}, which does not exist",
            )
            expl.fixes.append(f"create the PodGroup {ns}/{group} (or fix the pod's group annotation/label)")
            return expl
        if min_member is not None and total < min_member:
            if mechanism == "coscheduling":
                text = COSCHEDULING_NOT_ENOUGH.format(pod.metadata.name, total, min_member)
                expl = _explanation(pod, f"0/{sched.index.num_nodes} nodes are available: {text}.", "gang")
            else:
                expl = _explanation(pod, _volcano_condition(pg), "gang")
            _add(
                expl,
                "gang-incomplete",
                f"{mechanism} PodGroup {ns}/{group} needs minMember={min_member} pods but only {total} exist "
                f"({bound} placed): the gang waits all-or-nothing for the rest",
            )
            expl.fixes.append(
                "check why the controller did not create the missing pods (quota, queue, a failed pod), "
                f"or lower minMember of PodGroup {ns}/{group} if the job can start with fewer"
            )
            return expl
        phase = pg.get("status", "phase")
        if mechanism == "volcano" and phase == "Pending":
            expl = _explanation(pod, _volcano_condition(pg), "queue")
            queue = pg.get("spec", "queue") or "default"
            _add(
                expl,
                "gang-queue",
                f"Volcano PodGroup {ns}/{group} is still Pending: queue {queue!r} has not admitted it (Inqueue)",
            )
            return expl
        if mechanism == "volcano" and bound:
            expl = _explanation(pod, "", "scheduler")
            _add(
                expl,
                GANG,
                f"{VOLCANO_GANG}{ns}/{group}: {bound} of {total} pods are placed, minMember={min_member}; "
                "the rest must fit at the same time",
                subject=f"{ns}/{group}",
            )
            return expl
    if pod.status.nominated_node_name:
        expl = _explanation(pod, "", "scheduler")
        _add(
            expl,
            "nominated",
            f"preemption already nominated node {pod.status.nominated_node_name}: the pod waits there for its "
            "victims to terminate (graceful termination)",
        )
        return expl
    return None


def pre_enqueue_cause(expl: Explanation, status: Status) -> None:
    """A PreEnqueue plugin keeps the pod out of the scheduling queue: say which and why.

    kube-scheduler adds such a pod to its unschedulable pods without a scheduling cycle
    (pkg/scheduler/backend/queue/scheduling_queue.go ``runPreEnqueuePlugins``), so no
    FailedScheduling event or PodScheduled condition is written; it is tried once an event the
    plugin registered (here a ResourceClaim add/update) lets it in."""
    reason = status.message
    _add(
        expl,
        "pre-enqueue",
        f"{status.plugin} PreEnqueue keeps the pod out of the scheduling queue: {reason}; kube-scheduler never "
        "tries it (no FailedScheduling event) until that changes",
    )
    pod = expl.pod
    ns = pod.metadata.namespace or "default"
    created = {c.name for c in pod.status.resource_claim_statuses}
    waiting = sorted(
        {
            c.resource_claim_template_name
            for c in pod.spec.resource_claims
            if c.resource_claim_template_name and c.name not in created
        }
    )
    if waiting:
        expl.fixes.append(
            f"the resourceclaim controller (kube-controller-manager) creates the claim from ResourceClaimTemplate "
            f"{', '.join(waiting)} in {ns}: check that the template exists (kubectl get resourceclaimtemplates -n "
            f"{ns}) and the pod's events (kubectl describe pod {pod.metadata.name} -n {ns})"
        )
    else:
        expl.fixes.append(
            f"create the ResourceClaim the pod names in {ns}, or wait for a claim being deleted to be recreated "
            f"(kubectl get resourceclaims -n {ns})"
        )


def _volcano_condition(pg: Manifest) -> str:
    for cond in pg.get("status", "conditions", default=[]) or []:
        if isinstance(cond, dict) and cond.get("type") == "Unschedulable" and cond.get("message"):
            return str(cond["message"])
    return ""


# Kueue texts (kubernetes-sigs/kueue pkg/cache, pkg/scheduler; reference/scheduling.md §4.4)
KUEUE_LOCALQUEUE_MISSING = "LocalQueue {} doesn't exist"
KUEUE_CLUSTERQUEUE_MISSING = "ClusterQueue {} doesn't exist"


def workload_explanations(sched: Scheduler) -> list[Explanation]:
    """Workloads whose pods do not exist yet: a Kueue job held suspended, or a controller
    whose pod creation the ResourceQuota admission refuses (``exceeded quota: ...``)."""
    from gpuplane.k8s.objects import ObjectMeta  # deferred for start-up time

    out: list[Explanation] = []
    cluster = sched.cluster
    local_queues = {
        (q.namespace or "default", q.name): q for q in cluster.by_kind("LocalQueue", "kueue.x-k8s.io")
    }
    cluster_queues = {q.name for q in cluster.by_kind("ClusterQueue", "kueue.x-k8s.io")}
    workloads = cluster.by_kind("Workload", "kueue.x-k8s.io")
    for obj in cluster.objects:
        if obj.kind in ("Pod", "Workload"):
            continue
        ns = obj.namespace or "default"
        subject = Pod(metadata=ObjectMeta(name=obj.name, namespace=ns))
        queue = obj.labels.get(KUEUE_QUEUE_LABEL)
        suspended = obj.get("spec", "suspend") is True or obj.get("spec", "runPolicy", "suspend") is True
        if queue and suspended:
            expl = _explanation(subject, "", "queue")
            expl.subject = obj.ref()
            lq = local_queues.get((ns, queue))
            if lq is None:
                expl.message = KUEUE_LOCALQUEUE_MISSING.format(queue)
                _add(
                    expl,
                    "kueue-localqueue-missing",
                    f"{obj.kind} {ns}/{obj.name} waits in Kueue, but LocalQueue {ns}/{queue} does not exist",
                )
                expl.fixes.append(
                    f"create LocalQueue {queue} in {ns} pointing at a ClusterQueue, or fix the label {KUEUE_QUEUE_LABEL}"
                )
            else:
                cq = lq.get("spec", "clusterQueue") or ""
                if cq and cq not in cluster_queues:
                    expl.message = KUEUE_CLUSTERQUEUE_MISSING.format(cq)
                    _add(
                        expl,
                        "kueue-clusterqueue-missing",
                        f"LocalQueue {ns}/{queue} points at ClusterQueue {cq}, which does not exist",
                    )
                else:
                    text = _workload_condition(workloads, obj)
                    expl.message = text
                    _add(
                        expl,
                        "kueue-suspended",
                        f"{obj.kind} {ns}/{obj.name} is suspended by Kueue until ClusterQueue {cq or '?'} admits it"
                        + (f": {text}" if text else ""),
                    )
                    if "insufficient" in text:
                        expl.fixes.append(
                            f"raise nominalQuota (or borrowingLimit) in ClusterQueue {cq}, or wait for admitted workloads to finish"
                        )
            out.append(expl)
            continue
        for cond in obj.get("status", "conditions", default=[]) or []:
            message = cond.get("message", "") if isinstance(cond, dict) else ""
            if isinstance(message, str) and "exceeded quota" in message:
                expl = _explanation(subject, message, "quota")
                expl.subject = obj.ref()
                _add(
                    expl,
                    "quota",
                    f"ResourceQuota admission refuses the pods of {obj.kind} {ns}/{obj.name}: they are never created",
                )
                expl.fixes.append(
                    f"kubectl describe resourcequota -n {ns}  # raise the hard limit or free quota"
                )
                out.append(expl)
                break
    return out


def _workload_condition(workloads: list[Manifest], owner: Manifest) -> str:
    uid = owner.metadata.get("uid")
    for wl in workloads:
        owners = wl.metadata.get("ownerReferences") or []
        if not any(
            isinstance(o, dict) and (o.get("uid") == uid or o.get("name") == owner.name) for o in owners
        ):
            continue
        for cond in wl.get("status", "conditions", default=[]) or []:
            if (
                isinstance(cond, dict)
                and cond.get("type") == "QuotaReserved"
                and cond.get("status") == "False"
            ):
                return str(cond.get("message") or "")
    return ""
