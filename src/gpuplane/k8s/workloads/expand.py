"""Dispatch from an object's (API group, kind) to the expander of its controller family."""

from __future__ import annotations

from collections.abc import Callable

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads import core, kubeai, kubeflow, ray, serving, sigs, spark, volcano
from gpuplane.k8s.workloads.discover import BUILTIN_GROUPS, discover_podsets
from gpuplane.k8s.workloads.model import ExpandContext, ExpansionProblem, PodSet, Related

Expander = Callable[[Manifest, ExpandContext], list[PodSet]]

EXPANDERS: dict[tuple[str, str], Expander] = {
    ("", "Pod"): core.expand_pod,
    ("apps", "Deployment"): core.expand_replicated,
    ("apps", "ReplicaSet"): core.expand_replicated,
    ("", "ReplicationController"): core.expand_replicated,
    ("apps", "StatefulSet"): core.expand_statefulset,
    ("apps", "DaemonSet"): core.expand_daemonset,
    ("batch", "Job"): core.expand_job,
    ("batch", "CronJob"): core.expand_cronjob,
    **{("kubeflow.org", kind): kubeflow.expand_replica_job for kind in kubeflow.REPLICA_FIELDS},
    ("trainer.kubeflow.org", "TrainJob"): kubeflow.expand_trainjob,
    ("jobset.x-k8s.io", "JobSet"): sigs.expand_jobset,
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): sigs.expand_leaderworkerset,
    ("ray.io", "RayCluster"): ray.expand_raycluster,
    ("ray.io", "RayJob"): ray.expand_rayjob,
    ("ray.io", "RayService"): ray.expand_rayservice,
    ("batch.volcano.sh", "Job"): volcano.expand_volcano_job,
    ("serving.kserve.io", "InferenceService"): serving.expand_inferenceservice,
    ("sparkoperator.k8s.io", "SparkApplication"): spark.expand_sparkapplication,
    ("kubeai.org", "Model"): kubeai.expand_model,
}

WORKLOAD_KINDS: frozenset[tuple[str, str]] = frozenset(EXPANDERS)

# Malformed input (a list where a map belongs, a size Spark refuses, an infinite number ...)
# must never escape as a traceback: the object then simply creates no PodSets; the linter's
# schema checks report the shape. Every caller (lint, scheduler, simulate, diagnose) relies on
# expansion never raising, so any exception an expander hits on hostile input counts.
_MALFORMED = Exception


def is_workload(obj: Manifest) -> bool:
    """True for kinds this module expands into pods."""
    return (obj.group, obj.kind) in EXPANDERS


def expand(obj: Manifest, *, nodes: list | None = None, related: Related | None = None) -> list[PodSet]:
    """PodSets of one object; ``[]`` for objects that create no pods (Service, ConfigMap, ...).

    ``nodes`` (typed ``Node`` list) sizes DaemonSets; ``related`` resolves references to
    other objects (TrainingRuntimes, PodGroups, ServingRuntimes).
    """
    expander = EXPANDERS.get((obj.group, obj.kind))
    if expander is None or not isinstance(obj.data, dict):
        return []
    try:
        return expander(obj, ExpandContext(nodes, related))
    except _MALFORMED:
        return []


def expand_all(
    objects: list[Manifest],
    nodes: list | None = None,
    problems: list[ExpansionProblem] | None = None,
    *,
    discover: bool = False,
) -> list[PodSet]:
    """Expand every object, resolving references among ``objects`` themselves. Never raises.

    Pass a list as ``problems`` to learn which objects (or which of their pod templates) could
    not be expanded: a template that is not a mapping (``template: 5``) or an expander failing
    on hostile input. Without it those objects just create no PodSets.

    With ``discover``, custom resources no expander knows get the PodSets of the pod specs found
    inside them (:mod:`gpuplane.k8s.workloads.discover`: count unknown, generic checks only). Lint
    asks for them; the scheduler and simulator do not (they would place pods whose number the
    operator decides).
    """
    related = Related.from_objects(objects)
    ctx = ExpandContext(nodes, related, problems)
    out: list[PodSet] = []
    unknown: list[Manifest] = []
    for obj in objects:
        if not isinstance(obj.data, dict):
            continue
        expander = EXPANDERS.get((obj.group, obj.kind))
        if expander is None:
            if discover and obj.group not in BUILTIN_GROUPS:
                unknown.append(obj)
            continue
        _run(expander, obj, ctx, out)
    if unknown:
        # an object another workload takes its pods from (a TrainJob's runtime) is analysed
        # through that workload, never twice
        used = {id(ps.template_source) for ps in out if ps.template_source is not None}
        for obj in unknown:
            if id(obj) not in used:
                _run(discover_podsets, obj, ctx, out)
    return out


def _run(expander: Expander, obj: Manifest, ctx: ExpandContext, out: list[PodSet]) -> None:
    try:
        out.extend(expander(obj, ctx))
    except _MALFORMED as exc:
        if ctx.problems is not None:
            ctx.problems.append(ExpansionProblem(obj, _failure_field(obj), f"{type(exc).__name__}: {exc}"))


def _failure_field(obj: Manifest) -> tuple[str, ...]:
    """Where to point at an object whose expander failed: its ``spec`` when it has one."""
    return ("spec",) if "spec" in obj.data else ()
