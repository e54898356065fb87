"""Volcano Job ``batch.volcano.sh/v1alpha1`` (volcano-sh/volcano ``batch/v1alpha1/job.go``).

``tasks[]`` each run ``replicas`` pods of their template; the job's PodGroup has
``minMember = spec.minAvailable`` (defaulted by the webhook to the sum of task replicas) and
``spec.queue`` (default ``default``). The job controller sends every pod to
``spec.schedulerName`` (webhook default ``volcano``) when the template names none
(``pkg/controllers/job/job_controller_util.go``); that is injected into the typed pod.
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    mark_distributed,
    nonneg,
    role_from_name,
)


def expand_volcano_job(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    scheduler = as_str(spec.get("schedulerName")) or "volcano"
    priority = as_str(spec.get("priorityClassName"))
    podsets: list[PodSet] = []
    for index, task in enumerate(as_list(spec.get("tasks"))):
        template = ctx.template(obj, task, "template", ("spec", "tasks", index, "template"))
        if template is None:
            continue
        name = as_str(dig(task, "name")) or f"default{index}"
        replicas = nonneg(as_int(as_dict(task).get("replicas"), 0))
        ps = PodSet(
            obj,
            name,
            role_from_name(name, "worker"),
            replicas,
            template,
            ("spec", "tasks", index, "template"),
        )
        ps.injected = {"spec": {"schedulerName": scheduler}}
        if priority:
            ps.injected["spec"]["priorityClassName"] = priority
        ps.priority_class = priority
        podsets.append(ps)
    if not podsets:
        return []
    total = mark_distributed(podsets)
    min_available = as_int(spec.get("minAvailable"), None)
    queue = as_str(spec.get("queue")) or "default"
    native = Gang("volcano", obj.name, min_available if min_available is not None else total, queue)
    return finish(obj, podsets, ctx.related, native=native)
