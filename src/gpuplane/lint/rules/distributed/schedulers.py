"""Secondary schedulers and their queues: a ``schedulerName`` nobody serves, a gang without its queue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.k8s.schedulers import RunningSchedulers
from gpuplane.k8s.wellknown import DEFAULT_SCHEDULER, KUEUE_QUEUE_LABEL
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import obj_label
from gpuplane.lint.rules.distributed._shared import _ns
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

KUEUE_GROUP = "kueue.x-k8s.io"
VOLCANO_SCHED_GROUP = "scheduling.volcano.sh"
VOLCANO_QUEUE_ANNOTATIONS = ("scheduling.volcano.sh/queue-name", "volcano.sh/queue-name")


def _running_schedulers(ctx: LintContext) -> RunningSchedulers | None:
    """Schedulers known to run (cluster + input), or None when the cluster shows nothing to judge by."""
    cluster = ctx.cluster
    if cluster is None:
        return None
    controllers = [
        *ctx.by_kind("Deployment", "apps", include_cluster=True),
        *ctx.by_kind("StatefulSet", "apps", include_cluster=True),
    ]
    if not cluster.pods and not controllers:
        return None
    return RunningSchedulers(cluster.pods, controllers, ctx.by_kind("ConfigMap", "", include_cluster=True))


@rule(
    id="scheduler-not-installed",
    severity="error",
    category="distributed",
    summary="schedulerName names a scheduler that does not run in the cluster: Pending forever, no events.",
    context="required",
)
def scheduler_not_installed(ctx: LintContext) -> Iterator[Finding]:
    names = _running_schedulers(ctx)
    if names is None:
        return
    for ps in ctx.podsets:
        sched = pod_spec(ps).get("schedulerName")
        path: FieldPath = (*ps.spec_path, "schedulerName")
        if sched is None and ps.source.kind == "Job" and ps.source.group == "batch.volcano.sh":
            sched, path = ps.source.get("spec", "schedulerName"), ("spec", "schedulerName")
        if not isinstance(sched, str) or not sched or sched in names:
            continue
        yield ctx.report(
            ps.source,
            path,
            f'Pods of {obj_label(ps.source)} ({ps.name}) ask for scheduler "{sched}", which does not '
            "run in this cluster: they stay Pending forever with no events (no scheduler ever looks at them).",
            f"Install the {sched} scheduler, fix the name, or remove schedulerName to use {DEFAULT_SCHEDULER}.",
        )


def _volcano_queue_ref(ps: PodSet) -> tuple[str, FieldPath] | None:
    """The explicitly written Volcano queue of a pod set and where it is written."""
    src = ps.source
    if src.kind == "Job" and src.group == "batch.volcano.sh":
        queue = src.get("spec", "queue")
        return (str(queue), ("spec", "queue")) if queue else None
    queue = src.get("spec", "runPolicy", "schedulingPolicy", "queue")
    if queue:
        return str(queue), ("spec", "runPolicy", "schedulingPolicy", "queue")
    for key in VOLCANO_QUEUE_ANNOTATIONS:
        if src.annotations.get(key):
            return str(src.annotations[key]), ("metadata", "annotations", key)
    meta = ps.template.get("metadata") if isinstance(ps.template, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    for key in VOLCANO_QUEUE_ANNOTATIONS:
        if isinstance(ann, dict) and ann.get(key):
            return str(ann[key]), (*ps.template_path, "metadata", "annotations", key)
    return None


@rule(
    id="gang-queue-missing",
    severity="error",
    category="distributed",
    summary="Kueue LocalQueue or Volcano Queue named by the workload does not exist (or is closed).",
    context="required",
)
def gang_queue_missing(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None:
        return
    local_queues = {(_ns(q), q.name): q for q in ctx.by_kind("LocalQueue", KUEUE_GROUP, include_cluster=True)}
    cluster_queues = {q.name for q in ctx.by_kind("ClusterQueue", KUEUE_GROUP, include_cluster=True)}
    kueue_known = bool(local_queues or cluster_queues)
    vqueues = {q.name: q for q in ctx.by_kind("Queue", VOLCANO_SCHED_GROUP, include_cluster=True)}
    done: set[tuple[int, FieldPath]] = set()
    for ps in ctx.podsets:
        src = ps.source
        queue = src.labels.get(KUEUE_QUEUE_LABEL)
        if kueue_known and queue and (id(src), ("kueue",)) not in done:
            done.add((id(src), ("kueue",)))
            path: FieldPath = ("metadata", "labels", KUEUE_QUEUE_LABEL)
            lq = local_queues.get((_ns(src), str(queue)))
            problem = None
            if lq is None:
                problem = f"LocalQueue {queue} does not exist in namespace {_ns(src)}"
            elif lq.get("spec", "stopPolicy") in ("Hold", "HoldAndDrain"):
                problem = f"LocalQueue {queue} is stopped (stopPolicy {lq.get('spec', 'stopPolicy')})"
            elif cluster_queues and lq.get("spec", "clusterQueue") not in cluster_queues:
                problem = (
                    f"LocalQueue {queue} points at ClusterQueue {lq.get('spec', 'clusterQueue')}, "
                    "which does not exist"
                )
            if problem:
                yield ctx.report(
                    src,
                    path,
                    f"{obj_label(src)} is submitted to Kueue but {problem}: the workload stays suspended and "
                    "no pod is ever created.",
                    f"Create LocalQueue {queue} in namespace {_ns(src)} pointing at an existing ClusterQueue "
                    "(or fix the kueue.x-k8s.io/queue-name label).",
                )
        if not vqueues:
            continue
        ref = _volcano_queue_ref(ps)
        if ref is None or (id(src), ref[1]) in done:
            continue
        done.add((id(src), ref[1]))
        name, vpath = ref
        vq = vqueues.get(name)
        if vq is None:
            problem = f"Volcano Queue {name} does not exist"
        elif str(vq.get("status", "state") or vq.get("spec", "state") or "").lower() in ("closed", "closing"):
            problem = f"Volcano Queue {name} is {vq.get('status', 'state') or vq.get('spec', 'state')}"
        else:
            continue
        yield ctx.report(
            src,
            vpath,
            f"{obj_label(src)}: {problem}: Volcano never admits its PodGroup (Pending) and no pod runs.",
            f"Create (or reopen) Volcano Queue {name}, or submit to an existing open queue.",
        )
