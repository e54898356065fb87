"""AIBrix ``orchestration.aibrix.ai/v1alpha1``: StormService and RayClusterFleet.

Field names from vllm-project/aibrix (commit e3e10f9e) ``api/orchestration/v1alpha1``:

- ``stormservice_types.go`` ``StormServiceSpec``: ``replicas`` (RoleSets, default 1), ``template``
  (``RoleSetTemplateSpec``: ``metadata`` + ``spec``). ``roleset_types.go`` ``RoleSetSpec``:
  ``roles[]`` and ``schedulingStrategy``; ``RoleSpec``: ``name``, ``replicas``, ``podGroupSize``
  (> 1: each replica is a group of that many pods for multi-node inference, created by the PodSet
  controller, ``pkg/controller/podset/podset_controller.go`` ``desiredPodCount``), ``template`` (a
  core/v1 ``PodTemplateSpec``), ``schedulingStrategy``. ``SchedulingStrategy`` holds
  ``coschedulingSchedulingStrategy`` / ``volcanoSchedulingStrategy`` / ``godelSchedulingStrategy``
  with ``minMember`` (a PodGroup per RoleSet, or per role when set on the role).
  Pods of a role: ``replicas × roles[].replicas × podGroupSize``.
- ``rayclusterfleet_types.go`` ``RayClusterFleetSpec``: ``replicas`` RayClusters (default 1) of
  ``template.spec``, a KubeRay ``RayClusterSpec`` (``raycluster_type.go``): each cluster is
  expanded as KubeRay's (head + worker groups, KubeRay's memory-backed ``/dev/shm``).
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads import ray
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    nonneg,
    role_from_name,
)

_STRATEGIES = (
    ("coschedulingSchedulingStrategy", "coscheduling"),
    ("volcanoSchedulingStrategy", "volcano"),
    ("godelSchedulingStrategy", "godel"),
)


def scheduling_gang(strategy: object, name: str, total: int) -> Gang | None:
    """The PodGroup an AIBrix ``SchedulingStrategy`` asks for (``minMember`` 0 or unset: every pod)."""
    strategy = as_dict(strategy)
    for key, mechanism in _STRATEGIES:
        spec = strategy.get(key)
        if isinstance(spec, dict):
            minimum = as_int(spec.get("minMember"), 0)
            queue = as_str(spec.get("queue"))
            return Gang(mechanism, name, minimum if minimum and minimum > 0 else total, queue)
    return None


def expand_stormservice(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    rolesets = nonneg(as_int(spec.get("replicas"), 1))
    roleset = as_dict(as_dict(spec.get("template")).get("spec"))
    base = ("spec", "template", "spec", "roles")
    podsets: list[PodSet] = []
    role_gangs: list[Gang | None] = []
    for index, role in enumerate(as_list(roleset.get("roles"))):
        template = ctx.template(obj, role, "template", (*base, index, "template"))
        if template is None:
            continue
        name = as_str(as_dict(role).get("name")) or f"role-{index}"
        replicas = nonneg(as_int(role.get("replicas"), 1))
        group = max(nonneg(as_int(role.get("podGroupSize"), 1)), 1)
        ps = PodSet(
            obj,
            name,
            role_from_name(name, "server"),
            rolesets * replicas * group,
            template,
            (*base, index, "template"),
            distributed=group > 1,
        )
        podsets.append(ps)
        role_gangs.append(
            scheduling_gang(role.get("schedulingStrategy"), f"{obj.name}-{name}", replicas * group)
        )
    if not podsets:
        return []
    per_roleset = sum(ps.count for ps in podsets) // rolesets if rolesets else 0
    native = scheduling_gang(roleset.get("schedulingStrategy"), obj.name, per_roleset)
    out: list[PodSet] = []
    for ps, gang in zip(podsets, role_gangs, strict=True):
        out.extend(finish(obj, [ps], ctx.related, native=gang or native, kueue_whole=False))
    return out


def expand_rayclusterfleet(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    clusters = nonneg(as_int(spec.get("replicas"), 1))
    cluster = as_dict(as_dict(spec.get("template")).get("spec"))
    podsets = ray.cluster_podsets(obj, ctx, cluster, ("spec", "template", "spec"), False)
    native = ray.ray_gang(obj, podsets)  # one PodGroup per RayCluster
    for ps in podsets:
        ps.count *= clusters
        if ps.max_count is not None:
            ps.max_count *= clusters
    return finish(obj, podsets, ctx.related, kueue_whole=False, native=native)
