"""Distributed-training rules: gangs, queues, schedulers, rank networking, /dev/shm.

Facts: reference/scheduling.md §4 (why the default scheduler partially places
multi-pod jobs; Volcano, coscheduling and Kueue objects and messages) and §5 (how
each ML job controller expands into pods); reference/platform.md §4.6 (/dev/shm).
Pod templates are read through PodSets; only rules about a controller's own fields
(PyTorchJob Master replicas, Volcano/Kubeflow minAvailable, Job parallelism) read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.k8s.workloads.kubeflow import REPLICA_FIELDS
from gpuplane.lint import kinds
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import AppendItem, Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_dict, as_int, as_list, as_str, dict_items, obj_label, where
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import ContainerRef, LintContext

DEFAULT_SCHEDULER = "default-scheduler"
KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_SCHED_GROUP = "scheduling.volcano.sh"
VOLCANO_QUEUE_ANNOTATIONS = ("scheduling.volcano.sh/queue-name", "volcano.sh/queue-name")
PODGROUP_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io", "scheduling.volcano.sh")
SHM_PATH = "/dev/shm"
SHM_VOLUME = "dshm"
SHM_DEFAULT_SIZE = "16Gi"
# Signs that the pods of an Indexed Job form one distributed program (ranks talk to each other).
_DIST_ENV = frozenset(
    {
        "MASTER_ADDR",
        "MASTER_PORT",
        "WORLD_SIZE",
        "RANK",
        "NODE_RANK",
        "PET_NNODES",
        "NCCL_SOCKET_IFNAME",
        "NCCL_DEBUG",
        "OMPI_MCA_orte_default_hostfile",
    }
)
_DIST_CMD = re.compile(
    r"torchrun|torch\.distributed|deepspeed|mpirun|horovodrun|accelerate launch|--nnodes|"
    r"--master[_-]addr|jax\.distributed|megatron"
)


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _by_source(podsets: list[PodSet]) -> dict[int, list[PodSet]]:
    """Pod sets grouped by the object that creates them, in input order."""
    groups: dict[int, list[PodSet]] = {}
    for ps in podsets:
        groups.setdefault(id(ps.source), []).append(ps)
    return groups


# ---------------------------------------------------------------------------------------------

GANG_MISSING_DOCS = """
## What it catches

A multi-pod GPU job whose pods must all run together (PyTorchJob / TFJob /
MPIJob / TrainJob / JobSet / RayJob / Volcano Job workers, an Indexed Job
with `parallelism > 1`, a LeaderWorkerSet group) with no gang mechanism: no
Volcano PodGroup or `minAvailable`, no coscheduling pod-group label, no Kueue
`kueue.x-k8s.io/queue-name` label, no training-operator `schedulingPolicy`.

Only GPU pods count: a job is reported when 2 or more of its pods ask for
GPUs (an MPIJob launcher, BytePS scheduler/servers or a Ray head without GPUs
are not counted, and a job with a single GPU pod is not a GPU gang). For a
LeaderWorkerSet the count is the GPU pods of one group (leader and workers).
KubeRay: a RayService is not reported (Ray Serve replicas scale on their own
and do not rendezvous); a RayCluster or RayJob is reported only when 2 or more
of its pods ask for GPUs (the GPU workers of one Ray job).

## Why it hurts

kube-scheduler places pods one at a time and binds each at once. Two 4-pod
jobs on a cluster with room for 4 pods can each get 2 pods placed: both hold
GPUs, their other ranks report
`0/8 nodes are available: 8 Insufficient nvidia.com/gpu.` and neither
starts: the bound ranks wait in NCCL/torch rendezvous until they time out,
burning GPU hours (a resource deadlock).

## How to fix

Admit or place the job all-or-nothing: submit it to a Kueue LocalQueue
(`kueue.x-k8s.io/queue-name`, with `waitForPodsReady`), run it under Volcano
(`schedulerName: volcano` + PodGroup / `minAvailable`), or use
scheduler-plugins coscheduling (`scheduling.x-k8s.io/pod-group` label and a
PodGroup with `minMember`).

## Bad

```yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llama-ft}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: ...}
    Worker: {replicas: 3, template: ...}
```

## Good

```yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: llama-ft
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: ...}
    Worker: {replicas: 3, template: ...}
```

## References

- reference/scheduling.md §4.1 (partial placement), §4.2 Volcano, §4.3
  coscheduling, §4.4 Kueue.
- kubernetes-sigs/scheduler-plugins `pkg/coscheduling`; volcano-sh/volcano `pkg/scheduler/plugins/gang`.
"""


@rule(
    id="gang-scheduling-missing",
    severity="warning",
    category="distributed",
    summary="Multi-pod GPU job with no gang mechanism (Volcano, coscheduling, Kueue, schedulingPolicy).",
    docs=GANG_MISSING_DOCS,
)
def gang_scheduling_missing(ctx: LintContext) -> Iterator[Finding]:
    gpu = {id(ps) for ps in ctx.gpu_podsets()}
    for group in _by_source(ctx.podsets).values():
        src = group[0].source
        if src.kind == "RayService" or not any(ps.distributed for ps in group):
            continue  # Ray Serve: autoscaled replicas, no rendezvous
        gpu_sets = [ps for ps in group if id(ps) in gpu]
        if src.kind == "LeaderWorkerSet":
            size = as_int(src.get("spec", "leaderWorkerTemplate", "size"), 1) or 1
            # GPU pods of one group: the leader (when it asks for GPUs) plus size - 1 workers
            total = sum(1 if ps.role == "leader" else size - 1 for ps in gpu_sets)
        else:
            total = sum(ps.count for ps in gpu_sets)
        if total < 2:
            continue
        if any(ps.gang is not None or ps.queue for ps in group):
            continue
        yield ctx.report(
            src,
            ("metadata", "name"),
            f"{obj_label(src)} runs {total} GPU pods that must all run together, with no gang mechanism: "
            "kube-scheduler can bind some ranks and leave the rest Pending (Insufficient GPUs), so the bound "
            "ranks hold GPUs and hang in rendezvous.",
            "Admit it all-or-nothing: add the label kueue.x-k8s.io/queue-name: <LocalQueue>, or run it under "
            "Volcano (schedulerName: volcano + minAvailable/PodGroup) or coscheduling (scheduling.x-k8s.io/pod-group "
            "label + PodGroup minMember).",
        )


# ---------------------------------------------------------------------------------------------

GANG_MIN_EXCEEDS_DOCS = """
## What it catches

A gang minimum larger than the pods that exist: Volcano Job `spec.minAvailable`
above the sum of task replicas, a task's `minAvailable` above its `replicas`,
Kubeflow `runPolicy.schedulingPolicy.minAvailable` above the job's replicas, or
a PodGroup (Volcano or coscheduling) `minMember` above the pods that join it in
the input.

## Why it hurts

The gang is never complete, so nothing is ever scheduled. Volcano's admission
webhook rejects such a Job outright:

```
admission webhook "validatejob.volcano.sh" denied the request: job 'minAvailable' should not be greater than total replicas in tasks
admission webhook "validatejob.volcano.sh" denied the request: 'minAvailable' is greater than 'replicas' in task: worker, job: train
```

and a PodGroup with too large a `minMember` leaves its pods Pending forever
(`Not enough valid tasks for gang-scheduling, valid: 4, min: 8`, coscheduling:
`pre-filter pod ... cannot find enough sibling pods, current pods number: 4, minMember of group: 8`).

## How to fix

Set the minimum to the number of pods that must run together, at most the
total replicas.

## Bad

```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
spec:
  minAvailable: 5
  tasks:
  - {name: worker, replicas: 4, template: ...}
```

## Good

```yaml
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
spec:
  minAvailable: 4
  tasks:
  - {name: worker, replicas: 4, template: ...}
```

## References

- volcano-sh/volcano `pkg/webhooks/admission/jobs/validate/admit_job.go` (messages above).
- kubernetes-sigs/scheduler-plugins `pkg/coscheduling/core/core.go` (PreFilter message).
- reference/scheduling.md §4.2-§4.3, §5.
"""


def _pods(ps: PodSet) -> int:
    """Pods of a PodSet once it runs: a suspended controller (Kueue holds it) keeps its size
    in ``resume_count``, and its gang minimum is judged against that size."""
    return ps.resume_count if ps.suspended else ps.count


def _explicit_gang_mins(ctx: LintContext) -> Iterator[tuple[Manifest, FieldPath, int, int, str, bool]]:
    """Every explicit gang minimum in the input: (object, field, min, pods, what, elastic).

    Pod counts come from the PodSets (the workload model sums replicas once); the minimum of
    a controller's own gang is its ``Gang.min_member``. Only minimums written in the input
    count (the field path is where the finding points); a defaulted one equals the pods.
    """
    for group in _by_source(ctx.podsets).values():
        src = group[0].source
        gang = group[0].gang
        if src.kind == "Job" and src.group == "batch.volcano.sh":
            for ps in group:
                # template_path is ("spec", "tasks", <index>, "template"): the task's own minimum
                index = ps.template_path[2]
                task_min = as_int(src.get("spec", "tasks", index, "minAvailable"), None)
                if task_min is not None:
                    yield (
                        src,
                        ("spec", "tasks", index, "minAvailable"),
                        task_min,
                        _pods(ps),
                        f"task {ps.name}",
                        True,
                    )
            if (
                gang is not None
                and gang.min_member is not None
                and as_int(src.get("spec", "minAvailable"), None) is not None
            ):
                yield src, ("spec", "minAvailable"), gang.min_member, sum(map(_pods, group)), "job", False
        elif src.group == "kubeflow.org" and src.kind in REPLICA_FIELDS:
            path: FieldPath = ("spec", "runPolicy", "schedulingPolicy", "minAvailable")
            if gang is None or gang.min_member is None or as_int(src.get(*path), None) is None:
                continue
            elastic = src.get("spec", "elasticPolicy") is not None
            yield src, path, gang.min_member, sum(map(_pods, group)), "job", elastic
    # PodGroup objects joined by pods of other workloads (coscheduling label / Volcano annotation).
    members: dict[tuple[str, str], int] = {}
    jobs: dict[tuple[str, str], bool] = {}
    for ps in ctx.podsets:
        gang = ps.gang
        if gang is not None and gang.name and gang.mechanism in ("coscheduling", "volcano"):
            key = (_ns(ps.source), gang.name)
            members[key] = members.get(key, 0) + ps.count
            jobs[key] = jobs.get(key, False) or kinds.is_training(ps) or ps.distributed
    for group in PODGROUP_GROUPS:
        for pg in ctx.by_kind("PodGroup", group):
            key = (_ns(pg), pg.name)
            min_member = as_int(pg.get("spec", "minMember"), None)
            if key in members and min_member is not None:
                yield (
                    pg,
                    ("spec", "minMember"),
                    min_member,
                    members[key],
                    "PodGroup",
                    not jobs.get(key, False),
                )


@rule(
    id="gang-min-exceeds-replicas",
    severity="error",
    category="distributed",
    summary="Gang minimum (minMember / minAvailable) larger than the job's pods: never schedulable.",
    docs=GANG_MIN_EXCEEDS_DOCS,
)
def gang_min_exceeds_replicas(ctx: LintContext) -> Iterator[Finding]:
    for obj, path, minimum, pods, what, _elastic in _explicit_gang_mins(ctx):
        if minimum <= pods:
            continue
        if obj.kind == "Job" and what == "job":
            upstream = "job 'minAvailable' should not be greater than total replicas in tasks"
        elif obj.kind == "Job":
            upstream = (
                f"'minAvailable' is greater than 'replicas' in {what.replace('task ', 'task: ')}, "
                f"job: {obj.name}"
            )
        else:
            upstream = "the gang never completes and no pod is scheduled"
        yield ctx.report(
            obj,
            path,
            f"{obj_label(obj)}: {what} gang minimum {minimum} is larger than its {pods} pod(s): "
            f"never schedulable ({upstream}).",
            f"Set {path[-1]} to at most {pods} (the number of pods that must run together).",
            patch=(SetValue(path, pods),) if pods > 0 else (),
        )


GANG_MIN_BELOW_DOCS = """
## What it catches

A gang minimum below the pod count of a non-elastic distributed GPU job:
Volcano Job `minAvailable`, Kubeflow `schedulingPolicy.minAvailable`, or the
`minMember` of a PodGroup joined by training pods. PyTorchJobs with an
`elasticPolicy` and per-task minimums of Volcano Jobs are exempt.

## Why it hurts

The scheduler starts the job as soon as `min` pods fit. A fixed-size job
(`torchrun --nnodes=N`, MPI with a fixed hostfile) needs every rank: the started
ranks hold their GPUs and wait in rendezvous for ranks that are still Pending
(`Insufficient nvidia.com/gpu`), then time out; gang scheduling was turned off
in effect.

## How to fix

Set the minimum to the job's pod count (Volcano's default when
`minAvailable` is omitted), or make the job elastic (PyTorch `elasticPolicy`
with `minReplicas`) if it can really start with fewer ranks.

## Bad

```yaml
apiVersion: kubeflow.org/v1
kind: PyTorchJob
spec:
  runPolicy:
    schedulingPolicy: {minAvailable: 2}
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: ...}
    Worker: {replicas: 7, template: ...}
```

## Good

```yaml
spec:
  runPolicy:
    schedulingPolicy: {minAvailable: 8}
```

## References

- reference/scheduling.md §4.2 (Volcano `minAvailable` defaults to the sum of
  replicas), §5 (training-operator PodGroup `minMember`).
"""


@rule(
    id="gang-min-below-replicas",
    severity="warning",
    category="distributed",
    summary="Gang minimum below the pod count of a non-elastic job: starts partially, then hangs.",
    docs=GANG_MIN_BELOW_DOCS,
    fixable=True,
)
def gang_min_below_replicas(ctx: LintContext) -> Iterator[Finding]:
    gpu_sources = {id(ps.source) for ps in ctx.gpu_podsets()}
    gpu_groups = {(_ns(ps.source), ps.gang.name) for ps in ctx.gpu_podsets() if ps.gang is not None}
    for obj, path, minimum, pods, what, elastic in _explicit_gang_mins(ctx):
        if elastic or minimum >= pods or minimum < 1:
            continue
        if obj.kind == "PodGroup":
            if (_ns(obj), obj.name) not in gpu_groups:
                continue
        elif id(obj) not in gpu_sources:
            continue
        yield ctx.report(
            obj,
            path,
            f"{obj_label(obj)}: {what} gang minimum {minimum} is below its {pods} pods: the job starts with "
            f"{minimum} ranks holding GPUs while the others may stay Pending, and a fixed-size job hangs in "
            "rendezvous.",
            f"Set {path[-1]} to {pods}, or make the job elastic if it can really start with fewer ranks.",
            patch=(SetValue(path, pods),),
        )


# ---------------------------------------------------------------------------------------------

SCHEDULER_DOCS = """
## What it catches

With `--cluster`: a pod template whose `schedulerName` names a scheduler
that does not run in the cluster. A scheduler counts as running when the
snapshot shows a pod it bound (a bound pod with that `schedulerName`), a
scheduler Deployment/Pod with `--scheduler-name=<name>` or a
KubeSchedulerConfiguration profile of that name, or the Volcano scheduler
(`vc-scheduler` image) for `volcano`. When the snapshot has no pods and no
Deployments the rule cannot know and stays silent.

## Why it hurts

Only the scheduler named in `schedulerName` ever looks at the pod. If it does
not exist, the pod stays Pending forever with **no events at all** (no
`FailedScheduling`: nobody tried), which is one of the hardest Pending pods to
debug.

## How to fix

Install the scheduler (Volcano, scheduler-plugins as a second scheduler
named e.g. `scheduler-plugins-scheduler`), fix the name, or drop
`schedulerName` to use `default-scheduler`.

## Bad

```yaml
spec:
  schedulerName: volcano      # Volcano is not installed
```

## Good

```yaml
spec:
  schedulerName: default-scheduler
```

## References

- Kubernetes docs, "Configure Multiple Schedulers".
- reference/scheduling.md §4.2 (Volcano), §4.3 (scheduler-plugins second scheduler), §4.5.
"""

_SCHED_ARG = re.compile(r"--scheduler-name[= ]([A-Za-z0-9._-]+)")
_SCHED_CONF = re.compile(r"schedulerName:\s*[\"']?([A-Za-z0-9._-]+)")


def _command_line(container: dict[str, Any]) -> str:
    """``command`` and ``args`` joined into one line (a field that is not a list counts as unset:
    the API server rejects it, rule pod-template-invalid reports it)."""
    return " ".join(str(a) for a in (*as_list(container.get("command")), *as_list(container.get("args"))))


def _images_args(template: Any) -> Iterator[tuple[str, str]]:
    for _i, c in dict_items(as_dict(as_dict(template).get("spec")).get("containers")):
        yield as_str(c.get("image")), _command_line(c)


def _scheduler_names(ctx: LintContext) -> set[str] | None:
    """Schedulers known to run (cluster + input), or None when the cluster shows nothing to judge by."""
    cluster = ctx.cluster
    if cluster is None:
        return None
    names = {DEFAULT_SCHEDULER}
    evidence = bool(cluster.pods)
    for pod in cluster.pods:
        if pod.spec.node_name and pod.spec.scheduler_name:
            names.add(pod.spec.scheduler_name)
        for c in pod.spec.containers:
            if c.image and "vc-scheduler" in c.image:
                names.add("volcano")
    controllers = [
        *ctx.by_kind("Deployment", "apps", include_cluster=True),
        *ctx.by_kind("StatefulSet", "apps", include_cluster=True),
    ]
    evidence = evidence or bool(controllers)
    for obj in controllers:
        for image, args in _images_args(obj.get("spec", "template")):
            if "vc-scheduler" in image:
                names.add("volcano")
            names.update(_SCHED_ARG.findall(args))
    for cm in ctx.by_kind("ConfigMap", "", include_cluster=True):
        data = cm.data.get("data")
        for text in data.values() if isinstance(data, dict) else ():
            if isinstance(text, str) and "KubeSchedulerConfiguration" in text:
                names.update(_SCHED_CONF.findall(text))
    return names if evidence else None


@rule(
    id="scheduler-not-installed",
    severity="error",
    category="distributed",
    summary="schedulerName names a scheduler that does not run in the cluster: Pending forever, no events.",
    docs=SCHEDULER_DOCS,
    context="required",
)
def scheduler_not_installed(ctx: LintContext) -> Iterator[Finding]:
    names = _scheduler_names(ctx)
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


# ---------------------------------------------------------------------------------------------

QUEUE_DOCS = """
## What it catches

With `--cluster`: a workload submitted to a queue that does not exist or does
not admit work:

- Kueue: the `kueue.x-k8s.io/queue-name` LocalQueue is missing from the
  workload's namespace, is stopped (`stopPolicy: Hold` / `HoldAndDrain`), or
  points at a ClusterQueue that does not exist;
- Volcano: the queue named by `spec.queue`, `schedulingPolicy.queue`, a
  PodGroup or the `scheduling.volcano.sh/queue-name` annotation does not exist
  or is `Closed`.

Checked only when the cluster (or input) holds objects of that system
(LocalQueues/ClusterQueues, Volcano Queues); otherwise the rule cannot tell.

## Why it hurts

Kueue leaves the job suspended: its Workload reports
`LocalQueue team-a doesn't exist` (or the ClusterQueue is inactive) and no pod
is ever created. Volcano rejects the Job (`unable to find job queue`) or
leaves the PodGroup `Pending` because a closed queue admits nothing.

## How to fix

Create the LocalQueue (pointing at an existing ClusterQueue) in the
workload's namespace, or the Volcano Queue, or fix the name; reopen a closed
queue.

## Bad

```yaml
metadata:
  labels: {kueue.x-k8s.io/queue-name: team-a}   # no LocalQueue team-a in this namespace
```

## Good

```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-a, namespace: research}
spec: {clusterQueue: gpu-cluster-queue}
```

## References

- kubernetes-sigs/kueue `pkg/controller/core/workload_controller.go` (inadmissible reasons),
  LocalQueue `stopPolicy`.
- volcano-sh/volcano queue states (`Open`, `Closed`, `Closing`).
- reference/scheduling.md §4.2, §4.4.
"""


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
    docs=QUEUE_DOCS,
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


# ---------------------------------------------------------------------------------------------

INDEXED_DNS_DOCS = """
## What it catches

An Indexed batch Job with `parallelism > 1` and GPUs whose pod template has no
`subdomain`, or whose `subdomain` names a Service that is not headless
(`clusterIP: None`) or selects no pods of the Job. Missing Services are only
reported with `--cluster`.

## Why it hurts

Ranks find rank 0 by name (`MASTER_ADDR=<job>-0.<subdomain>`). Pod hostnames
of an Indexed Job are `<job>-<index>`, but they are only resolvable in DNS
through a headless Service named by `subdomain` that selects the pods.
Without it every rank fails to resolve the master:

```
torch.distributed.DistNetworkError: ... failed to resolve train-0.train: Name or service not known
```

## How to fix

Create a headless Service (`clusterIP: None`, selector
`batch.kubernetes.io/job-name: <job>`) and set `subdomain: <service>` in the
pod template.

## Bad

```yaml
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  template:
    spec:
      containers: [{name: t, image: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]
```

## Good

```yaml
apiVersion: v1
kind: Service
metadata: {name: train}
spec:
  clusterIP: None
  selector: {batch.kubernetes.io/job-name: train}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  template:
    spec:
      subdomain: train
      containers: [{name: t, image: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]
```

## References

- Kubernetes docs, Jobs, "Completion mode" (Indexed Job pod hostnames) and
  "Job with Pod-to-Pod Communication".
- Kubernetes docs, "DNS for Services and Pods" (hostname + subdomain records).
- reference/scheduling.md §5.
"""


def _indexed_job(ps: PodSet) -> dict[str, Any] | None:
    """The Job spec of a plain batch/v1 Indexed Job pod set, else None."""
    src = ps.source
    if src.kind != "Job" or src.group != "batch":
        return None
    spec = src.data.get("spec")
    if not isinstance(spec, dict) or spec.get("completionMode") != "Indexed":
        return None
    return spec


def _selects(selector: Any, labels: dict[str, str]) -> bool:
    """Whether a Service's ``spec.selector`` (a label map, ANDed) selects pods with ``labels``.

    An empty or missing selector selects no pods for the Service's own endpoints (the
    endpoints controller skips selector-less Services), so it never counts as selecting.
    """
    return (
        isinstance(selector, dict)
        and bool(selector)
        and label_selector_matches({"matchLabels": selector}, labels)
    )


@rule(
    id="indexed-job-no-stable-dns",
    severity="warning",
    category="distributed",
    summary="Indexed GPU Job with parallelism > 1 but no subdomain + headless Service: ranks cannot reach rank 0.",
    docs=INDEXED_DNS_DOCS,
    context="optional",
)
def indexed_job_no_stable_dns(ctx: LintContext) -> Iterator[Finding]:
    services: dict[tuple[str, str], Manifest] | None = None
    for ps in ctx.gpu_podsets():
        spec = _indexed_job(ps)
        if spec is None or (as_int(spec.get("parallelism"), 1) or 0) < 2:
            continue
        src = ps.source
        subdomain = pod_spec(ps).get("subdomain")
        if not subdomain:
            yield ctx.report(
                src,
                ps.spec_path,
                f"Indexed {obj_label(src)} runs {spec.get('parallelism')} GPU ranks in parallel but its pods have no "
                "subdomain: their hostnames (<job>-<index>) do not resolve, so ranks cannot reach rank 0 "
                "(MASTER_ADDR).",
                f"Create a headless Service (clusterIP: None, selector batch.kubernetes.io/job-name: {src.name}) and "
                "set spec.template.spec.subdomain to its name.",
            )
            continue
        if services is None:
            services = {(_ns(s), s.name): s for s in ctx.by_kind("Service", "", include_cluster=True)}
        svc = services.get((_ns(src), str(subdomain)))
        path = (*ps.spec_path, "subdomain")
        if svc is None:
            if ctx.cluster is None:
                continue
            problem = f"no Service {subdomain} exists in namespace {_ns(src)}"
        else:
            labels = dict(ps.pod().metadata.labels)  # typed: a mistyped label map counts as none
            labels.setdefault("batch.kubernetes.io/job-name", src.name)
            labels.setdefault("job-name", src.name)
            if svc.get("spec", "clusterIP") != "None":
                problem = f"Service {subdomain} is not headless (clusterIP: None)"
            elif not _selects(svc.get("spec", "selector"), labels):
                problem = f"Service {subdomain} does not select the Job's pods"
            else:
                continue
        yield ctx.report(
            src,
            path,
            f"Indexed {obj_label(src)}: {problem}, so the ranks' hostnames (<job>-<index>.{subdomain}) get no DNS "
            "records and ranks cannot reach rank 0.",
            f"Use a headless Service {subdomain} (clusterIP: None) selecting batch.kubernetes.io/job-name: "
            f"{src.name} in namespace {_ns(src)}.",
        )


# ---------------------------------------------------------------------------------------------

PARTIAL_PARALLELISM_DOCS = """
## What it catches

A distributed Indexed GPU Job (its pods run `torchrun` / `deepspeed` /
`mpirun`, set `MASTER_ADDR` / `WORLD_SIZE`, or use a `subdomain`) whose
`parallelism` is lower than `completions`.

## Why it hurts

Only `parallelism` pods run at a time; the remaining indexes start when
earlier ones finish. A distributed program needs all ranks at once: the first
`parallelism` ranks wait in rendezvous for ranks that can never start while
they run, and time out, holding their GPUs the whole time.

## How to fix

Set `parallelism` equal to `completions` (and use gang admission).

## Bad

```yaml
spec:
  completionMode: Indexed
  completions: 8
  parallelism: 4
```

## Good

```yaml
spec:
  completionMode: Indexed
  completions: 8
  parallelism: 8
```

## References

- Kubernetes docs, Jobs, "Parallel execution for Jobs" and "Completion mode".
- reference/scheduling.md §5 (pods per Job that must be simultaneously schedulable = parallelism).
"""


def _looks_distributed(ctx: LintContext, ps: PodSet) -> bool:
    if pod_spec(ps).get("subdomain"):
        return True
    for c in ctx.containers(ps, ("containers",)):
        if any(as_str(e.get("name")) in _DIST_ENV for _i, e in c.env()):
            return True
        if _DIST_CMD.search(_command_line(c.data)):
            return True
    return False


@rule(
    id="indexed-job-partial-parallelism",
    severity="warning",
    category="distributed",
    summary="Distributed Indexed GPU Job with parallelism < completions: ranks never run together.",
    docs=PARTIAL_PARALLELISM_DOCS,
    fixable=True,
)
def indexed_job_partial_parallelism(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        spec = _indexed_job(ps)
        if spec is None:
            continue
        parallelism = as_int(spec.get("parallelism"), 1) or 0
        completions = as_int(spec.get("completions"), None)
        if (
            completions is None
            or parallelism < 1
            or parallelism >= completions
            or not _looks_distributed(ctx, ps)
        ):
            continue
        src = ps.source
        path: FieldPath = ("spec", "parallelism") if "parallelism" in spec else ("spec", "completions")
        yield ctx.report(
            src,
            path,
            f"Indexed {obj_label(src)} is a distributed GPU job with {completions} ranks but parallelism "
            f"{parallelism}: only {parallelism} ranks run at once and they wait in rendezvous for ranks that "
            "cannot start.",
            f"Set spec.parallelism to {completions} (= completions).",
            patch=(SetValue(("spec", "parallelism"), completions),),
        )


# ---------------------------------------------------------------------------------------------

MASTER_DOCS = """
## What it catches

A PyTorchJob whose `pytorchReplicaSpecs.Master.replicas` is not 1, or is
omitted.

## Why it hurts

The Master is rank 0 and the rendezvous endpoint (`MASTER_ADDR`); there can
be only one. The training-operator's validating webhook rejects the job:

```
admission webhook "validator.pytorchjob.training-operator.kubeflow.org" denied the request: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1
```

Since training-operator v1.8 the webhook also rejects an omitted value (the
field is not defaulted before validation); older operators defaulted it to 1,
so an omitted value is reported as a warning.

## How to fix

Set `Master.replicas: 1` and put the other ranks in `Worker`.

## Bad

```yaml
pytorchReplicaSpecs:
  Master: {replicas: 2, template: ...}
```

## Good

```yaml
pytorchReplicaSpecs:
  Master: {replicas: 1, template: ...}
  Worker: {replicas: 1, template: ...}
```

## References

- kubeflow/training-operator `pkg/webhooks/pytorch/pytorchjob_webhook.go`
  (`validatePyTorchReplicaSpecs`: `Forbidden ... "must be 1"`).
"""


@rule(
    id="pytorchjob-master-replicas",
    severity="error",
    category="distributed",
    summary="PyTorchJob Master replicas != 1 (rejected by the training-operator webhook).",
    docs=MASTER_DOCS,
    fixable=True,
)
def pytorchjob_master_replicas(ctx: LintContext) -> Iterator[Finding]:
    for job in ctx.by_kind("PyTorchJob", "kubeflow.org"):
        master = job.get("spec", "pytorchReplicaSpecs", "Master")
        if not isinstance(master, dict):
            continue
        base = ("spec", "pytorchReplicaSpecs", "Master")
        replicas = master.get("replicas")
        if replicas is None:
            yield ctx.report(
                job,
                base,
                f"{obj_label(job)}: Master.replicas is not set; training-operator v1.8+ rejects it "
                "(spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1).",
                "Set spec.pytorchReplicaSpecs.Master.replicas: 1.",
                severity="warning",
                patch=(SetValue((*base, "replicas"), 1),),
            )
        elif as_int(replicas, None) != 1:
            yield ctx.report(
                job,
                (*base, "replicas"),
                f"{obj_label(job)}: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 "
                f"(got {replicas}); there is exactly one rank-0 master.",
                "Set Master.replicas: 1 and move the other ranks to Worker.",
                patch=(SetValue((*base, "replicas"), 1),),
            )


# ---------------------------------------------------------------------------------------------

LAUNCHER_DOCS = """
## What it catches

An MPIJob whose Launcher requests GPUs while `runLauncherAsWorker` is not
true.

## Why it hurts

The launcher only runs `mpirun`, which starts the ranks on the workers over
SSH; it is not in the hostfile and never uses its GPUs. They stay reserved
for the whole job (and the launcher may wait Pending for a GPU node that the
workers need).

## How to fix

Remove the GPU request from the Launcher (give it a little CPU and memory), or
set `runLauncherAsWorker: true` if the launcher should also run a rank.

## Bad

```yaml
mpiReplicaSpecs:
  Launcher:
    replicas: 1
    template:
      spec:
        containers:
        - name: launcher
          resources: {limits: {nvidia.com/gpu: 1}}
```

## Good

```yaml
mpiReplicaSpecs:
  Launcher:
    replicas: 1
    template:
      spec:
        containers:
        - name: launcher
          resources: {limits: {cpu: "1", memory: 1Gi}}
```

## References

- kubeflow/mpi-operator `pkg/apis/kubeflow/v2beta1/types.go` (`runLauncherAsWorker`) and
  `pkg/controller/mpi_job_controller.go` (hostfile lists workers only).
- reference/scheduling.md §5.
"""


def _gpu_field(c: ContainerRef, resource: str) -> FieldPath:
    limits = c.resources("limits")
    kind = "limits" if resource in limits else "requests"
    return (*c.path, "resources", kind, resource)


@rule(
    id="mpijob-launcher-gpu",
    severity="warning",
    category="distributed",
    summary="MPIJob launcher requests GPUs it will not use.",
    docs=LAUNCHER_DOCS,
)
def mpijob_launcher_gpu(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.kind != "MPIJob" or ps.name != "launcher" or src.get("spec", "runLauncherAsWorker") is True:
            continue
        for c in ctx.containers(ps):
            for resource, count in c.gpu_requests().items():
                yield ctx.report(
                    src,
                    _gpu_field(c, resource),
                    f"{where(ps, c)} (the MPIJob launcher) requests {count} {resource} but the launcher "
                    "only runs mpirun and is not a rank: the GPUs stay idle and reserved for the whole job.",
                    f"Remove {resource} from the launcher's resources, or set spec.runLauncherAsWorker: true.",
                )


# ---------------------------------------------------------------------------------------------

SHM_DOCS = """
## What it catches

A GPU container that uses shared memory the way PyTorch DataLoader workers and
NCCL do, with no memory-backed `emptyDir` mounted at `/dev/shm`. A `/dev/shm`
mount of a disk-backed `emptyDir` is reported too.

Which containers count (a heuristic: a GPU container running `sleep`, a GPU
burn-in or `agnhost pause` does not need a big `/dev/shm`):

- a GPU container of a training workload (training-operator jobs, TrainJob,
  JobSet, RayJob, Volcano Job, GPU Jobs and CronJobs) that runs a known ML
  framework or launcher, or asks for 2 or more GPUs;
- any other container that asks for 2 or more GPUs and runs a known ML
  framework or launcher (a tensor-parallel inference server uses NCCL).

"Runs a known ML framework or launcher": its image, `command` or `args`
names one of torch / pytorch / torchrun, tensorflow, jax, deepspeed,
megatron, nemo, horovod, mpirun, accelerate, vllm, tgi /
text-generation(-inference), sglang, trtllm / tensorrt-llm, ray, paddle,
mxnet, byteps, mindspore, nccl, lightning or transformers (whole words of the
lower-cased text).

Skipped: pods with `hostIPC: true` (they use the host's `/dev/shm`), and the
Ray container of KubeRay head and worker pods (RayCluster, RayJob,
RayService): KubeRay mounts a memory-backed `emptyDir` `shared-mem` at
`/dev/shm` in it, sized to the container's memory limit
(ray-operator/controllers/ray/common/pod.go `BuildPod` / `addEmptyDir`).

## Why it hurts

Containers get a 64 MiB `/dev/shm` (containerd's default; Kubernetes has no
`--shm-size`). PyTorch DataLoader workers pass batches through shared memory
and NCCL uses it for intra-node transport, so they fail as soon as they need
more:

```
ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).
RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error.
NCCL WARN Error: failed to extend /dev/shm/nccl-abc123 to 9637892 bytes
```

## How to fix

Mount a memory-backed `emptyDir` at `/dev/shm` with a `sizeLimit` (it counts
against the container's memory limit). `--fix` adds volume `dshm` and the
mount.

## Bad

```yaml
containers:
- name: trainer
  image: nvcr.io/nvidia/pytorch:24.08-py3
  resources: {limits: {nvidia.com/gpu: 8}}
```

## Good

```yaml
containers:
- name: trainer
  image: nvcr.io/nvidia/pytorch:24.08-py3
  resources: {limits: {nvidia.com/gpu: 8}}
  volumeMounts: [{name: dshm, mountPath: /dev/shm}]
volumes:
- name: dshm
  emptyDir: {medium: Memory, sizeLimit: 16Gi}
```

## References

- containerd CRI `defaultShmSize` (64 MiB); Kubernetes docs, Volumes, emptyDir `medium: Memory`.
- pytorch/pytorch `torch/csrc/DataLoader.cpp` (bus-error messages); NCCL User Guide, Troubleshooting.
- ray-project/kuberay `ray-operator/controllers/ray/common/pod.go` (`SharedMemoryVolumeName`,
  `addEmptyDir`, `makeEmptyDirVolume`).
- reference/platform.md §4.6.
"""

# Whole words (of the lower-cased image, command and args) naming an ML framework or launcher
# that moves data through /dev/shm (DataLoader workers, NCCL, MPI shared-memory transport).
_ML_WORDS = re.compile(
    r"(?<![a-z0-9])(?:torch|pytorch|torchrun|tensorflow|jax|deepspeed|megatron|nemo|horovod|horovodrun|mpirun|"
    r"accelerate|vllm|tgi|text-generation|text-generation-inference|text-generation-launcher|sglang|trtllm|"
    r"tensorrt-llm|ray|paddle|paddlepaddle|mxnet|byteps|mindspore|nccl|lightning|transformers)(?![a-z])"
)


def runs_ml_framework(container: dict[str, Any]) -> bool:
    """The container's image, ``command`` or ``args`` names a known ML framework or launcher."""
    parts: list[str] = []
    image = container.get("image")
    if isinstance(image, str):
        parts.append(image)
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            parts.extend(v for v in value if isinstance(v, str))
    return bool(parts) and _ML_WORDS.search(" ".join(parts).lower()) is not None


def _volume_index(spec: dict[str, Any]) -> dict[str, tuple[int, dict[str, Any]]]:
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, vol in dict_items(spec.get("volumes")):
        if isinstance(vol.get("name"), str):
            out[vol["name"]] = (i, vol)
    return out


def _shm_mount(container: dict[str, Any]) -> tuple[int, str] | None:
    for j, m in dict_items(container.get("volumeMounts")):
        if as_str(m.get("mountPath")).rstrip("/") == SHM_PATH:
            return j, as_str(m.get("name"))
    return None


def _bytes(value: Any) -> int | None:
    """Whole bytes of a memory quantity (k8s.quantity grammar), None when the API would refuse it."""
    q = kinds.quantity_value(value)
    return None if q is None else int(q)


def _shm_size(container: dict[str, Any]) -> str:
    """A /dev/shm sizeLimit: half the container's memory limit (it counts against it), at most 16Gi."""
    res = container.get("resources")
    limits = res.get("limits") if isinstance(res, dict) else None
    memory = _bytes(limits.get("memory")) if isinstance(limits, dict) else None
    if memory is None:
        return SHM_DEFAULT_SIZE
    gib = max(1, min(16, memory // 2 // 2**30))
    return f"{gib}Gi"


def _free_volume_name(volumes: dict[str, Any]) -> str:
    name, n = SHM_VOLUME, 1
    while name in volumes:
        name, n = f"{SHM_VOLUME}-{n}", n + 1
    return name


@rule(
    id="shm-too-small",
    severity="warning",
    category="distributed",
    summary="GPU training / multi-GPU container without a memory-backed emptyDir at /dev/shm (64 MiB default).",
    docs=SHM_DOCS,
    fixable=True,
)
def shm_too_small(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        spec = pod_spec(ps)
        if spec.get("hostIPC") is True:
            continue
        training = kinds.is_training(ps)
        volumes = _volume_index(spec)
        new_volume: str | None = None
        for c in ctx.containers(ps, ("containers",)):
            gpus = sum(c.gpu_requests().values())
            if gpus == 0 or ps.shm_managed(c.index):
                continue
            framework = runs_ml_framework(c.data)
            if not ((training and (framework or gpus >= 2)) or (framework and gpus >= 2)):
                continue
            mount = _shm_mount(c.data)
            if mount is not None:
                _j, vol_name = mount
                found = volumes.get(vol_name)
                if found is None:
                    continue  # a mount of a missing volume is an API error reported elsewhere
                i, vol = found
                ed = vol.get("emptyDir")
                if not isinstance(ed, dict) and "emptyDir" not in vol:
                    continue  # hostPath / other memory-backed sources are the user's choice
                if isinstance(ed, dict) and ed.get("medium") == "Memory":
                    continue
                yield ctx.report(
                    ps.source,
                    (*ps.spec_path, "volumes", i, "emptyDir"),
                    f"{where(ps, c)} mounts /dev/shm from emptyDir {vol_name} on disk, not in "
                    "memory: shared-memory segments (DataLoader, NCCL) go through the node's disk.",
                    f"Set medium: Memory and a sizeLimit on volume {vol_name}.",
                    patch=(
                        SetValue((*ps.spec_path, "volumes", i, "emptyDir", "medium"), "Memory"),
                        SetValue((*ps.spec_path, "volumes", i, "emptyDir", "sizeLimit"), _shm_size(c.data)),
                    ),
                )
                continue
            ops: list[Any] = []
            if new_volume is None:
                new_volume = _free_volume_name(volumes)
                ops.append(
                    AppendItem(
                        (*ps.spec_path, "volumes"),
                        {
                            "name": new_volume,
                            "emptyDir": {"medium": "Memory", "sizeLimit": _shm_size(c.data)},
                        },
                    )
                )
            ops.append(AppendItem((*c.path, "volumeMounts"), {"name": new_volume, "mountPath": SHM_PATH}))
            what = "GPU training" if training else f"{gpus}-GPU"
            yield ctx.report(
                ps.source,
                (*c.path, "name"),
                f"{where(ps, c)} ({what}) has no memory-backed /dev/shm: it gets the 64 MiB "
                'container default, so PyTorch DataLoader workers die with "Bus error" and NCCL fails to extend '
                "/dev/shm.",
                f"Mount an emptyDir with medium: Memory and a sizeLimit (e.g. {_shm_size(c.data)}) at /dev/shm in "
                f"container {c.name}.",
                patch=tuple(ops),
            )


SHM_UNBOUNDED_DOCS = """
## What it catches

A memory-backed `emptyDir` mounted at `/dev/shm` with no `sizeLimit`.

KubeRay's own `/dev/shm` volume (`shared-mem`, added to the Ray container of
head and worker pods that mount nothing there) is sized by KubeRay to the
container's memory limit, so it is never reported; a `/dev/shm` volume the
manifest declares itself is (KubeRay leaves it as written).

## Why it hurts

With no `sizeLimit` the tmpfs may grow up to the node's allocatable memory
(`SizeMemoryBackedVolumes`), and everything written to it is charged to the
container's memory limit. A DataLoader that keeps filling shared memory is
OOM-killed (`OOMKilled`, exit code 137) or, without a memory limit, pushes the
node into memory pressure and evicts other pods.

## How to fix

Set `sizeLimit` to what the workload needs (workers x batch size, NCCL
buffers) and keep it below the container's memory limit. `--fix` sets half of
the container's memory limit (at most 16Gi).

## Bad

```yaml
volumes:
- name: dshm
  emptyDir: {medium: Memory}
```

## Good

```yaml
volumes:
- name: dshm
  emptyDir: {medium: Memory, sizeLimit: 16Gi}
```

## References

- Kubernetes docs, Volumes, emptyDir (`sizeLimit`, memory accounting).
- reference/platform.md §4.6.
"""


@rule(
    id="shm-unbounded",
    severity="info",
    category="distributed",
    summary="Memory-backed /dev/shm without sizeLimit: counts against the memory limit (OOMKill).",
    docs=SHM_UNBOUNDED_DOCS,
    fixable=True,
)
def shm_unbounded(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.podsets:
        spec = pod_spec(ps)
        volumes = _volume_index(spec)
        if not volumes:
            continue
        reported: set[str] = set()
        for c in ctx.containers(ps):
            mount = _shm_mount(c.data)
            if mount is None or mount[1] in reported or mount[1] not in volumes:
                continue
            i, vol = volumes[mount[1]]
            ed = vol.get("emptyDir")
            if not isinstance(ed, dict) or ed.get("medium") != "Memory" or ed.get("sizeLimit"):
                continue
            reported.add(mount[1])
            size = _shm_size(c.data)
            yield ctx.report(
                ps.source,
                (*ps.spec_path, "volumes", i, "emptyDir"),
                f"/dev/shm volume {mount[1]} of {ps.name} is memory-backed with no sizeLimit: it can grow to the "
                "node's memory and counts against the container's memory limit (OOMKilled).",
                f"Set emptyDir.sizeLimit on volume {mount[1]} (e.g. {size}, below the memory limit).",
                patch=(SetValue((*ps.spec_path, "volumes", i, "emptyDir", "sizeLimit"), size),),
            )


# ---------------------------------------------------------------------------------------------

FAILURE_POLICY_DOCS = """
## What it catches

A GPU batch Job (or CronJob) with neither a `podFailurePolicy` nor a tuned
`backoffLimit` / `backoffLimitPerIndex`.

## Why it hurts

The default `backoffLimit: 6` retries every failure, including ones a retry
cannot fix (a bug raising an exception, a bad argument, CUDA out of memory,
exit code 1): the job reruns up to 7 times, each time re-pulling images and
re-loading data on expensive GPUs, before it is marked `BackoffLimitExceeded`.
Conversely, infrastructure disruptions (preemption, node drain) count against
the same budget.

## How to fix

Add a `podFailurePolicy`: `FailJob` on the exit codes of your program's
non-retriable errors, `Ignore` on `DisruptionTarget` (preemption, drains), and
set `backoffLimit` to the number of retries you really want (pods need
`restartPolicy: Never`).

## Bad

```yaml
apiVersion: batch/v1
kind: Job
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: train, resources: {limits: {nvidia.com/gpu: 8}}}]
```

## Good

```yaml
apiVersion: batch/v1
kind: Job
spec:
  backoffLimit: 3
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: train, operator: In, values: [1]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: train, resources: {limits: {nvidia.com/gpu: 8}}}]
```

## References

- Kubernetes docs, Jobs, "Pod failure policy" and "Pod backoff failure policy"
  (default `backoffLimit` 6).
"""


@rule(
    id="training-no-failure-policy",
    severity="info",
    category="distributed",
    summary="GPU Job without podFailurePolicy or a tuned backoffLimit: retries non-retriable failures.",
    docs=FAILURE_POLICY_DOCS,
)
def training_no_failure_policy(ctx: LintContext) -> Iterator[Finding]:
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        src = ps.source
        if src.group != "batch" or id(src) in seen:
            continue
        if src.kind == "Job":
            base: FieldPath = ("spec",)
        elif src.kind == "CronJob":
            base = ("spec", "jobTemplate", "spec")
        else:
            continue
        seen.add(id(src))
        spec = src.get(*base)
        if not isinstance(spec, dict):
            continue
        if any(k in spec for k in ("podFailurePolicy", "backoffLimit", "backoffLimitPerIndex")):
            continue
        yield ctx.report(
            src,
            base,
            f"GPU {obj_label(src)} has no podFailurePolicy and the default backoffLimit (6): a bug or "
            "CUDA OOM is retried up to 6 times on GPUs, and preemptions count against the same budget.",
            "Add a podFailurePolicy (FailJob on your program's non-retriable exit codes, Ignore on "
            "DisruptionTarget) and set backoffLimit explicitly.",
        )
