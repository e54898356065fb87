"""Live gangs: which running and Pending pods belong together.

The workload model (``gpuplane.k8s.workloads``) says which pods a controller
*will* create and whether they form a gang; a snapshot shows the pods that *do*
exist, so here the same markers are read off the pods themselves
(reference/scheduling.md §4):

- Volcano: annotation ``scheduling.k8s.io/group-name`` (or
  ``scheduling.volcano.sh/group-name``) names a ``scheduling.volcano.sh``
  PodGroup whose ``spec.minMember`` must fit together;
- coscheduling: label ``scheduling.x-k8s.io/pod-group`` (and its older keys)
  names a ``scheduling.x-k8s.io`` PodGroup;
- Kueue plain-pod groups: label ``kueue.x-k8s.io/pod-group-name`` with the
  annotation ``kueue.x-k8s.io/pod-group-total-count``;
- no gang mechanism: the pods of one distributed training job (a Kubeflow
  job, a Volcano Job, a JobSet, a LeaderWorkerSet group, an Indexed Job). The
  default scheduler binds them one by one (§4.1), so a partly placed job holds
  GPUs while its rendezvous waits for ranks that cannot start.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.k8s.objects import Pod
from gpuplane.k8s.wellknown import KUBEFLOW_TRAINING_KINDS
from gpuplane.k8s.workloads.gangs import (
    COSCHEDULING_LABELS,
    KUEUE_POD_GROUP,
    KUEUE_POD_GROUP_TOTAL,
    VOLCANO_GROUP,
)

VOLCANO_GROUP_ALT = "scheduling.volcano.sh/group-name"
# Controllers whose pods are ranks of one distributed job (Kubeflow training-operator, MPI, Volcano Job).
TRAINING_OWNERS = KUBEFLOW_TRAINING_KINDS
KUBEFLOW_JOB_LABEL = "training.kubeflow.org/job-name"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
LWS_LABEL = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
JOB_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


@dataclass(slots=True)
class LiveGang:
    """Pods of one gang as they are now."""

    mechanism: str  # volcano | coscheduling | kueue | <owner kind> (no gang scheduler)
    namespace: str
    name: str  # PodGroup / job name
    group_kind: str  # the object that defines it: PodGroup, PyTorchJob, JobSet ...
    group_api: str  # its apiVersion group ("" when unknown)
    min_member: int | None = None
    pods: list[Pod] = field(default_factory=list)

    @property
    def bound(self) -> list[Pod]:
        """Pods placed on a node (Running, or bound and still starting)."""
        return [p for p in self.pods if p.spec.node_name]

    @property
    def waiting(self) -> list[Pod]:
        """Pods no node was found for."""
        return [p for p in self.pods if not p.spec.node_name]

    @property
    def label(self) -> str:
        if self.group_kind == "PodGroup":
            return f"{self.mechanism.capitalize()} PodGroup {self.namespace}/{self.name}"
        return f"{self.group_kind} {self.namespace}/{self.name}"


def _gang_key(pod: Pod) -> tuple[str, str, str, str, int | None] | None:
    """``(mechanism, name, kind, api group, min)`` of the gang ``pod`` belongs to, or None."""
    meta = pod.metadata
    labels = meta.labels
    annotations = meta.annotations
    group = annotations.get(VOLCANO_GROUP) or annotations.get(VOLCANO_GROUP_ALT)
    if group and pod.spec.scheduler_name == "volcano":
        return ("volcano", group, "PodGroup", "scheduling.volcano.sh", None)
    for key in COSCHEDULING_LABELS:
        group = labels.get(key)
        if group:
            return ("coscheduling", group, "PodGroup", "scheduling.x-k8s.io", None)
    group = labels.get(KUEUE_POD_GROUP)
    if group:
        total = annotations.get(KUEUE_POD_GROUP_TOTAL, "")
        return ("kueue", group, "Pod group", "", int(total) if total.isdigit() else None)
    for owner in meta.owner_references:
        if not owner.controller:
            continue
        group_api = owner.api_version.split("/", 1)[0] if "/" in owner.api_version else ""
        if owner.kind in TRAINING_OWNERS or (owner.kind == "Job" and group_api == "batch.volcano.sh"):
            return (owner.kind, owner.name, owner.kind, group_api, None)
    if labels.get(KUBEFLOW_JOB_LABEL):
        return ("training-operator", labels[KUBEFLOW_JOB_LABEL], "Kubeflow job", "kubeflow.org", None)
    if labels.get(JOBSET_LABEL):
        return ("JobSet", labels[JOBSET_LABEL], "JobSet", "jobset.x-k8s.io", None)
    if labels.get(LWS_LABEL) and labels.get(LWS_GROUP_LABEL):
        name = f"{labels[LWS_LABEL]} group {labels[LWS_GROUP_LABEL]}"
        return ("LeaderWorkerSet", name, "LeaderWorkerSet", "leaderworkerset.x-k8s.io", None)
    if labels.get(JOB_NAME_LABEL) and JOB_INDEX_ANNOTATION in annotations:
        return ("Job", labels[JOB_NAME_LABEL], "Job", "batch", None)
    return None


def live_gangs(pods: list[Pod]) -> list[LiveGang]:
    """Gangs of two or more non-terminal pods, in first-seen order."""
    gangs: dict[tuple[str, str, str], LiveGang] = {}
    for pod in pods:
        if pod.status.phase in ("Succeeded", "Failed") or pod.metadata.deletion_timestamp is not None:
            continue
        key = _gang_key(pod)
        if key is None:
            continue
        mechanism, name, kind, api, minimum = key
        namespace = pod.metadata.namespace or "default"
        gang = gangs.get((mechanism, namespace, name))
        if gang is None:
            gang = gangs[(mechanism, namespace, name)] = LiveGang(
                mechanism, namespace, name, kind, api, minimum
            )
        gang.pods.append(pod)
    return [gang for gang in gangs.values() if len(gang.pods) > 1 or gang.min_member]
