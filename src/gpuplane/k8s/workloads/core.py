"""Built-in controllers: Pod, Deployment, ReplicaSet, ReplicationController, StatefulSet,
DaemonSet, Job, CronJob.

Defaults follow the API (staging/src/k8s.io/api/apps/v1/types.go, batch/v1/types.go):
``replicas`` defaults to 1; a Job's pod count is ``min(parallelism, completions)`` and
``suspend: true`` means no pods yet (Kueue holds jobs that way until admission): ``count`` 0,
the size once resumed in ``resume_count``.
"""

from __future__ import annotations

from gpuplane.k8s.fields import annotation_int
from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.objects import to_dict
from gpuplane.k8s.wellknown import KUEUE_JOB_MIN_PARALLELISM
from gpuplane.k8s.workloads import daemon
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    PodSet,
    as_dict,
    as_int,
    as_list,
    dig,
    job_pod_count,
    nonneg,
    suspend,
)


def expand_pod(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """A bare Pod is its own template (path ``()``)."""
    ps = PodSet(obj, obj.name, "pod", 1, obj.data, ())
    return finish(obj, [ps], ctx.related, kueue_whole=False)


def _template(obj: Manifest, ctx: ExpandContext) -> dict | None:
    """``spec.template`` (a problem is recorded when it is there but not a mapping)."""
    return ctx.template(obj, obj.data.get("spec"), "template", ("spec", "template"))


def expand_replicated(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """Deployment / ReplicaSet / ReplicationController: ``replicas`` (default 1) copies."""
    template = _template(obj, ctx)
    if template is None:
        return []
    spec = as_dict(obj.data.get("spec"))
    count = nonneg(as_int(spec.get("replicas"), 1))
    ps = PodSet(obj, obj.name, "replica", count, template, ("spec", "template"))
    return finish(obj, [ps], ctx.related, kueue_whole=False)


def expand_statefulset(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """StatefulSet: ``replicas`` pods, each with its own claims from ``volumeClaimTemplates``.

    Kueue admits a StatefulSet as one pod group of all replicas (its statefulset integration).
    """
    template = _template(obj, ctx)
    if template is None:
        return []
    spec = as_dict(obj.data.get("spec"))
    count = nonneg(as_int(spec.get("replicas"), 1))
    claims = [c for c in as_list(spec.get("volumeClaimTemplates")) if isinstance(c, dict)]
    ps = PodSet(
        obj, obj.name, "replica", count, template, ("spec", "template"), volume_claim_templates=claims
    )
    return finish(obj, [ps], ctx.related)


def expand_daemonset(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """DaemonSet: one pod per eligible node when nodes are known, else 1 (``count_known=False``)."""
    template = _template(obj, ctx)
    if template is None:
        return []
    ps = PodSet(obj, obj.name, "daemon", 1, template, ("spec", "template"), count_known=False)
    extra = list(daemon.DAEMON_TOLERATIONS)
    if dig(template, "spec", "hostNetwork") is True:
        extra.append(daemon.HOST_NETWORK_TOLERATION)
    ps.injected = {"spec": {"tolerations": [to_dict(t) for t in extra]}}
    if ctx.nodes is not None:
        ps.count = len(daemon.eligible_nodes(ps.pod(), ctx.nodes))
        ps.count_known = True
    return finish(obj, [ps], ctx.related, kueue_whole=False)


def _job_podset(
    obj: Manifest, ctx: ExpandContext, job_spec: dict, path: tuple[str, ...], suspended: bool
) -> PodSet | None:
    template = ctx.template(obj, job_spec, "template", (*path, "template"))
    if template is None:
        return None
    indexed = job_spec.get("completionMode") == "Indexed"
    parallelism = nonneg(as_int(job_spec.get("parallelism"), 1))
    ps = PodSet(
        obj,
        obj.name,
        "pod",
        job_pod_count(job_spec),
        template,
        (*path, "template"),
        distributed=indexed and parallelism > 1,
    )
    suspend([ps], suspended)
    return ps


def expand_job(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """batch/v1 Job; an Indexed Job with ``parallelism > 1`` is a distributed job (ranks by index)."""
    spec = as_dict(obj.data.get("spec"))
    ps = _job_podset(obj, ctx, spec, ("spec",), spec.get("suspend") is True)
    if ps is None:
        return []
    # Kueue partial admission: the Job may start with fewer pods, down to this annotation's value
    min_parallelism = annotation_int(obj.annotations.get(KUEUE_JOB_MIN_PARALLELISM))
    return finish(obj, [ps], ctx.related, kueue_min=min_parallelism)


def expand_cronjob(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """CronJob: the pods of one run of ``jobTemplate`` (0 while the CronJob is suspended)."""
    spec = as_dict(obj.data.get("spec"))
    job_spec = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    ps = _job_podset(
        obj,
        ctx,
        job_spec,
        ("spec", "jobTemplate", "spec"),
        spec.get("suspend") is True or job_spec.get("suspend") is True,
    )
    if ps is None:
        return []
    return finish(obj, [ps], ctx.related)
