"""Kubernetes SIG batch/serving controllers: JobSet and LeaderWorkerSet.

- JobSet ``jobset.x-k8s.io/v1alpha2`` (kubernetes-sigs/jobset ``api/jobset/v1alpha2/jobset_types.go``):
  each ``replicatedJobs[]`` entry creates ``replicas`` (default 1) Jobs from a batch Job template,
  so ``replicas × min(parallelism, completions)`` pods; PodSets are named after the replicated
  job, as Kueue names them.
- LeaderWorkerSet ``leaderworkerset.x-k8s.io/v1`` (kubernetes-sigs/lws
  ``api/leaderworkerset/v1/leaderworkerset_types.go``): ``replicas`` groups (default 1) of
  ``size`` pods (default 1, leader included): one leader per group (``leaderTemplate``, or
  ``workerTemplate`` when absent) and ``size − 1`` workers. Kueue admits one Workload per group,
  so its gang is one group.
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    job_pod_count,
    mark_distributed,
    nonneg,
    role_from_name,
    suspend,
)


def expand_jobset(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    suspended = spec.get("suspend") is True
    podsets: list[PodSet] = []
    for index, rjob in enumerate(as_list(spec.get("replicatedJobs"))):
        job_spec = as_dict(dig(rjob, "template", "spec"))
        template = ctx.template(
            obj, job_spec, "template", ("spec", "replicatedJobs", index, "template", "spec", "template")
        )
        if template is None:
            continue
        name = as_str(dig(rjob, "name")) or f"job-{index}"
        replicas = nonneg(as_int(as_dict(rjob).get("replicas"), 1))
        count = replicas * job_pod_count(job_spec)
        path = ("spec", "replicatedJobs", index, "template", "spec", "template")
        podsets.append(PodSet(obj, name, role_from_name(name, "worker"), count, template, path))
    suspend(podsets, suspended)
    mark_distributed(podsets)
    return finish(obj, podsets, ctx.related)


def expand_leaderworkerset(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    lwt = as_dict(spec.get("leaderWorkerTemplate"))
    groups = nonneg(as_int(spec.get("replicas"), 1))
    size = nonneg(as_int(lwt.get("size"), 1))
    claims = [c for c in as_list(lwt.get("volumeClaimTemplates")) if isinstance(c, dict)]
    base = ("spec", "leaderWorkerTemplate")
    worker_template = ctx.template(obj, lwt, "workerTemplate", (*base, "workerTemplate"))
    leader_template = ctx.template(obj, lwt, "leaderTemplate", (*base, "leaderTemplate"))
    podsets: list[PodSet] = []
    if isinstance(leader_template, dict):
        podsets.append(PodSet(obj, "leader", "leader", groups, leader_template, (*base, "leaderTemplate")))
    elif isinstance(worker_template, dict):
        podsets.append(PodSet(obj, "leader", "leader", groups, worker_template, (*base, "workerTemplate")))
    if isinstance(worker_template, dict) and size > 1:
        podsets.append(
            PodSet(obj, "worker", "worker", groups * (size - 1), worker_template, (*base, "workerTemplate"))
        )
    for ps in podsets:
        ps.distributed = size > 1
        ps.volume_claim_templates = claims
    return finish(obj, podsets, ctx.related, kueue_min=size)
