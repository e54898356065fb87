"""KubeRay ``ray.io/v1``: RayCluster, RayJob, RayService.

A Ray cluster is one head pod plus, per ``workerGroupSpecs[]`` entry, the group's desired
replicas × ``numOfHosts`` worker pods. Desired replicas follow KubeRay's
``GetWorkerGroupDesiredReplicas`` (ray-operator/controllers/ray/utils/util.go): ``replicas``
clamped into ``[minReplicas, maxReplicas]`` (CRD defaults 0, 0, 2147483647), 0 for a
suspended group. A RayJob in ``K8sJobMode`` (the default) adds a submitter Job pod
(``submitterPodTemplate`` or KubeRay's default: the head image, 500m/200Mi requests, 1/1Gi limits,
ray-operator/controllers/ray/common/job.go ``GetDefaultSubmitterTemplate``).

Shared memory: KubeRay's ``BuildPod`` mounts a memory-backed emptyDir ``shared-mem`` at
``/dev/shm`` in the Ray container (the first one) of every head and worker pod unless it mounts
something there already, sized to that container's memory limit (else its request)
(ray-operator/controllers/ray/common/pod.go ``addEmptyDir`` / ``makeEmptyDirVolume`` /
``findMemoryReqOrLimit``): those PodSets carry ``managed_shm``.

Batch scheduling: the label ``ray.io/scheduler-name`` (``volcano``, ``yunikorn``) makes KubeRay
create a PodGroup ``ray-<name>-pg`` covering the head and the desired workers; the Volcano queue
comes from the ``volcano.sh/queue-name`` label.
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads.gangs import VOLCANO_QUEUE_SHORT, finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    nonneg,
    suspend,
)

_INT32_MAX = 2**31 - 1
KUBERAY = "KubeRay"  # head and worker pods get KubeRay's memory-backed /dev/shm (PodSet.managed_shm)
RAY_SCHEDULER_LABEL = "ray.io/scheduler-name"


def _desired_replicas(group: dict) -> int:
    if group.get("suspend") is True:
        return 0
    minimum = nonneg(as_int(group.get("minReplicas"), 0))
    maximum = nonneg(as_int(group.get("maxReplicas"), _INT32_MAX))
    replicas = as_int(group.get("replicas"), None)
    if minimum > maximum:
        return maximum
    if replicas is None or replicas < minimum:
        return minimum
    return min(replicas, maximum)


def cluster_podsets(
    obj: Manifest, ctx: ExpandContext, cluster: dict, base: tuple[str, ...], suspended: bool
) -> list[PodSet]:
    podsets: list[PodSet] = []
    head = ctx.template(obj, cluster.get("headGroupSpec"), "template", (*base, "headGroupSpec", "template"))
    if head is not None:
        podsets.append(
            PodSet(obj, "head", "head", 1, head, (*base, "headGroupSpec", "template"), managed_shm=KUBERAY)
        )
    for index, group in enumerate(as_list(cluster.get("workerGroupSpecs"))):
        template = ctx.template(obj, group, "template", (*base, "workerGroupSpecs", index, "template"))
        if template is None:
            continue
        name = as_str(dig(group, "groupName")) or f"worker-group-{index}"
        hosts = nonneg(as_int(group.get("numOfHosts"), 1))
        count = _desired_replicas(group) * hosts
        max_replicas = as_int(group.get("maxReplicas"), None)
        ps = PodSet(
            obj,
            name,
            "worker",
            count,
            template,
            (*base, "workerGroupSpecs", index, "template"),
            managed_shm=KUBERAY,
        )
        ps.max_count = max_replicas * hosts if max_replicas is not None else None
        podsets.append(ps)
    suspend(podsets, suspended)
    workers = any(ps.role == "worker" and ps.count > 0 for ps in podsets)
    for ps in podsets:
        ps.distributed = workers
    return podsets


def ray_gang(obj: Manifest, podsets: list[PodSet]) -> Gang | None:
    scheduler = as_str(obj.labels.get(RAY_SCHEDULER_LABEL))
    if not scheduler:
        return None
    total = sum(ps.count for ps in podsets if ps.role in ("head", "worker"))
    return Gang(scheduler, f"ray-{obj.name}-pg", total, as_str(obj.labels.get(VOLCANO_QUEUE_SHORT)))


def expand_raycluster(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    podsets = cluster_podsets(obj, ctx, spec, ("spec",), spec.get("suspend") is True)
    return finish(obj, podsets, ctx.related, native=ray_gang(obj, podsets))


def expand_rayservice(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    cluster = as_dict(dig(obj.data, "spec", "rayClusterConfig"))
    podsets = cluster_podsets(obj, ctx, cluster, ("spec", "rayClusterConfig"), False)
    return finish(obj, podsets, ctx.related, kueue_whole=False, native=ray_gang(obj, podsets))


def expand_rayjob(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    suspended = spec.get("suspend") is True
    cluster = as_dict(spec.get("rayClusterSpec"))
    podsets = cluster_podsets(obj, ctx, cluster, ("spec", "rayClusterSpec"), suspended) if cluster else []
    mode = spec.get("submissionMode") or "K8sJobMode"
    if mode == "K8sJobMode":
        submitter = ctx.template(obj, spec, "submitterPodTemplate", ("spec", "submitterPodTemplate"))
        if submitter is not None:
            ps = PodSet(obj, "submitter", "submitter", 1, submitter, ("spec", "submitterPodTemplate"))
        else:
            ps = PodSet(
                obj,
                "submitter",
                "submitter",
                1,
                _default_submitter(cluster),
                ("spec", "entrypoint"),
                synthetic=True,
            )
        suspend([ps], suspended)
        ps.distributed = any(p.distributed for p in podsets)
        podsets.append(ps)
    if not podsets:
        return []
    return finish(obj, podsets, ctx.related, native=ray_gang(obj, podsets))


def _default_submitter(cluster: dict) -> dict:
    image = dig(cluster, "headGroupSpec", "template", "spec", "containers", 0, "image")
    return {
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "ray-job-submitter",
                    "image": image if isinstance(image, str) else "rayproject/ray:latest",
                    "resources": {
                        "limits": {"cpu": "1", "memory": "1Gi"},
                        "requests": {"cpu": "500m", "memory": "200Mi"},
                    },
                }
            ],
        }
    }
