"""Gang and queue detection (reference/scheduling.md §4).

Three ways pods end up placed all-or-nothing, in the order they are checked:
1. the controller's own gang (Volcano Job ``minAvailable``, Kubeflow ``runPolicy.schedulingPolicy``,
   TrainJob ``podGroupPolicy``, KubeRay's batch scheduler) — decided by each family module;
2. a pod-level marker in the template: Volcano ``scheduling.k8s.io/group-name`` with
   ``schedulerName: volcano``, coscheduling label ``scheduling.x-k8s.io/pod-group`` (older keys
   too), Kueue plain-pod groups ``kueue.x-k8s.io/pod-group-name``; the PodGroup object (if given)
   supplies ``minMember`` and the queue;
3. Kueue: a workload labelled ``kueue.x-k8s.io/queue-name`` is admitted whole (the job stays
   suspended until the quota for every pod is reserved), which is gang semantics at admission
   (with ``waitForPodsReady`` also at start-up).
"""

from __future__ import annotations

from gpuplane.k8s.fields import annotation_int
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.wellknown import (
    COSCHEDULING_GROUPS,
    COSCHEDULING_LABELS,
    KUEUE_POD_GROUP,
    KUEUE_POD_GROUP_TOTAL,
    VOLCANO_MIN_MEMBER,
    VOLCANO_QUEUE,
    VOLCANO_QUEUE_SHORT,
    VOLCANO_SCHEDULER,
)
from gpuplane.k8s.wellknown import KUEUE_QUEUE_LABEL as KUEUE_QUEUE
from gpuplane.k8s.wellknown import VOLCANO_GROUP_ANNOTATION as VOLCANO_GROUP
from gpuplane.k8s.workloads.model import Gang, PodSet, Related, as_dict, as_int, as_str, dig


def kueue_queue(obj: Manifest) -> str | None:
    """The LocalQueue a workload is submitted to (label; the annotation is the deprecated form)."""
    return as_str(obj.labels.get(KUEUE_QUEUE)) or as_str(obj.annotations.get(KUEUE_QUEUE))


def volcano_queue(meta: dict) -> str | None:
    ann = as_dict(meta.get("annotations"))
    labels = as_dict(meta.get("labels"))
    return (
        as_str(ann.get(VOLCANO_QUEUE))
        or as_str(ann.get(VOLCANO_QUEUE_SHORT))
        or as_str(labels.get(VOLCANO_QUEUE))
        or as_str(labels.get(VOLCANO_QUEUE_SHORT))
    )


def template_gang(template: dict, obj: Manifest, related: Related | None) -> Gang | None:
    """A gang declared on the pod template (or on a bare Pod) itself."""
    meta = as_dict(template.get("metadata"))
    labels = as_dict(meta.get("labels"))
    annotations = as_dict(meta.get("annotations"))
    namespace = obj.namespace

    for key in COSCHEDULING_LABELS:
        group = as_str(labels.get(key))
        if group:
            pg = _podgroup(related, COSCHEDULING_GROUPS, namespace, group)
            min_member = as_int(dig(pg.data, "spec", "minMember"), None) if pg else None
            return Gang("coscheduling", group, min_member)

    scheduler = dig(template, "spec", "schedulerName")
    group = as_str(annotations.get(VOLCANO_GROUP)) or as_str(
        annotations.get("scheduling.volcano.sh/group-name")
    )
    if group and scheduler == VOLCANO_SCHEDULER:
        pg = _podgroup(related, ("scheduling.volcano.sh",), namespace, group)
        min_member = as_int(dig(pg.data, "spec", "minMember"), None) if pg else None
        queue = (as_str(dig(pg.data, "spec", "queue")) if pg else None) or volcano_queue(meta)
        return Gang("volcano", group, min_member, queue or ("default" if pg else None))
    if scheduler == VOLCANO_SCHEDULER:
        # no group annotation: Volcano makes a PodGroup per owner, minMember from the owner's annotation
        min_member = as_int(annotation_int(obj.annotations.get(VOLCANO_MIN_MEMBER)), None)
        if min_member and min_member > 1:
            return Gang("volcano", "", min_member, volcano_queue(meta) or volcano_queue(obj.metadata))

    kueue_group = as_str(labels.get(KUEUE_POD_GROUP))
    if kueue_group:
        total = as_int(annotation_int(annotations.get(KUEUE_POD_GROUP_TOTAL)), None)
        return Gang("kueue", kueue_group, total, as_str(labels.get(KUEUE_QUEUE)))
    return None


def _podgroup(
    related: Related | None, groups: tuple[str, ...], namespace: str | None, name: str
) -> Manifest | None:
    if related is None:
        return None
    for group in groups:
        found = related.get(group, "PodGroup", namespace, name)
        if found is not None:
            return found
    return None


def finish(
    obj: Manifest,
    podsets: list[PodSet],
    related: Related | None,
    *,
    native: Gang | None = None,
    kueue_whole: bool = True,
    kueue_min: int | None = None,
) -> list[PodSet]:
    """Attach gang and queue to every PodSet of one workload.

    ``native`` is the controller's own gang (wins). ``kueue_whole`` says whether Kueue admits
    this kind as one unit (Jobs, JobSets, Kubeflow jobs, Ray...) — not for Deployments or
    DaemonSets, whose pods Kueue admits one by one. ``kueue_min`` overrides the gang size
    (partial admission, one LeaderWorkerSet group); the default is every pod of the workload.
    """
    queue = kueue_queue(obj)
    total = sum(ps.count for ps in podsets)
    for ps in podsets:
        gang = native or template_gang(ps.template, obj, related)
        if gang is None and queue and kueue_whole:
            gang = Gang("kueue", obj.name, kueue_min if kueue_min is not None else total, queue)
        ps.gang = gang
        ps.queue = (
            queue or (gang.queue if gang else None) or volcano_queue(as_dict(ps.template.get("metadata")))
        )
    return podsets
