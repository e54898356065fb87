"""Dispatch from an object's (API group, kind) to the expander of its controller family."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads import core, kubeflow
from gpuplane.k8s.workloads.discover import BUILTIN_GROUPS, discover_podsets
from gpuplane.k8s.workloads.model import ExpandContext, ExpansionProblem, PodSet, Related

Expander = Callable[[Manifest, ExpandContext], list[PodSet]]


def _lazy(module: str, function: str) -> Expander:
    """The expander ``function`` of ``gpuplane.k8s.workloads.<module>``, imported on its first
    call: a one-file lint of a Pod needs the core expanders only, and the operator families'
    modules were a fifth of its start-up (issue 14 item 4)."""

    def expander(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
        found: Expander = getattr(importlib.import_module(f"gpuplane.k8s.workloads.{module}"), function)
        return found(obj, ctx)

    expander.__qualname__ = f"{module}.{function}"
    return expander


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
    ("jobset.x-k8s.io", "JobSet"): _lazy("sigs", "expand_jobset"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): _lazy("sigs", "expand_leaderworkerset"),
    ("ray.io", "RayCluster"): _lazy("ray", "expand_raycluster"),
    ("ray.io", "RayJob"): _lazy("ray", "expand_rayjob"),
    ("ray.io", "RayService"): _lazy("ray", "expand_rayservice"),
    ("batch.volcano.sh", "Job"): _lazy("volcano", "expand_volcano_job"),
    ("serving.kserve.io", "InferenceService"): _lazy("serving", "expand_inferenceservice"),
    ("sparkoperator.k8s.io", "SparkApplication"): _lazy("spark", "expand_sparkapplication"),
    ("kubeai.org", "Model"): _lazy("kubeai", "expand_model"),
    ("orchestration.aibrix.ai", "StormService"): _lazy("aibrix", "expand_stormservice"),
    ("orchestration.aibrix.ai", "RayClusterFleet"): _lazy("aibrix", "expand_rayclusterfleet"),
    ("workloads.x-k8s.io", "RoleBasedGroup"): _lazy("rbg", "expand_rolebasedgroup"),
    ("kaito.sh", "Workspace"): _lazy("operators", "expand_kaito_workspace"),
    ("kaito.sh", "InferenceSet"): _lazy("operators", "expand_kaito_inferenceset"),
    ("apps.nvidia.com", "NIMService"): _lazy("operators", "expand_nimservice"),
    ("apps.nvidia.com", "NIMCache"): _lazy("operators", "expand_nimcache"),
    ("nvidia.com", "DynamoGraphDeployment"): _lazy("operators", "expand_dynamo_graph"),
    ("serving.knative.dev", "Service"): _lazy("operators", "expand_knative_service"),
    ("sagemaker.amazonaws.com", "HyperPodPyTorchJob"): _lazy("elastic", "expand_hyperpod_pytorchjob"),
    ("elastic.iml.github.io", "ElasticJob"): _lazy("elastic", "expand_elasticjob"),
    ("elastic.pytorch.org", "ElasticJob"): _lazy("elastic", "expand_elasticjob"),
    # templates other objects take their pods from: expanded on their own only when unused
    ("trainer.kubeflow.org", "TrainingRuntime"): kubeflow.expand_trainingruntime,
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): kubeflow.expand_trainingruntime,
    ("serving.kserve.io", "ServingRuntime"): _lazy("operators", "expand_servingruntime"),
    ("serving.kserve.io", "ClusterServingRuntime"): _lazy("operators", "expand_servingruntime"),
}

WORKLOAD_KINDS: frozenset[tuple[str, str]] = frozenset(EXPANDERS)
# kinds that are templates for other workloads (a TrainJob's runtime, an InferenceService's
# ServingRuntime): expanded after the others, and only when no workload of the input uses them
RUNTIME_KINDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("trainer.kubeflow.org", "TrainingRuntime"),
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
        ("serving.kserve.io", "ServingRuntime"),
        ("serving.kserve.io", "ClusterServingRuntime"),
    }
)

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
    if expander is None or not isinstance(obj.data, dict) or (obj.group, obj.kind) in RUNTIME_KINDS:
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
    inside them (:mod:`gpuplane.k8s.workloads.discover`: count unknown, generic checks only), and
    runtimes no workload of the input uses (:data:`RUNTIME_KINDS`) get theirs. Lint asks for them;
    the scheduler and simulator do not (they would place pods that the operator sizes, or that
    nobody creates).
    """
    related = Related.from_objects(objects)
    ctx = ExpandContext(nodes, related, problems)
    out: list[PodSet] = []
    later: list[tuple[Expander, Manifest]] = []
    for obj in objects:
        if not isinstance(obj.data, dict):
            continue
        gk = (obj.group, obj.kind)
        expander = EXPANDERS.get(gk)
        if expander is None:
            if discover and obj.group not in BUILTIN_GROUPS:
                later.append((discover_podsets, obj))
        elif gk in RUNTIME_KINDS:
            if discover:  # a runtime creates no pods by itself: only lint checks it alone
                later.append((expander, obj))
        else:
            _run(expander, obj, ctx, out)
    if later:
        # an object another workload takes its pods from (a TrainJob's runtime, an
        # InferenceService's ServingRuntime) is analysed through that workload, never twice
        used = {id(ps.template_source) for ps in out if ps.template_source is not None}
        # deferred for start-up time: only input with runtimes or unknown kinds gets here
        from gpuplane.k8s.workloads.operators import referenced_runtimes

        runtimes = referenced_runtimes(objects)
        for expander, obj in later:
            if id(obj) in used or (obj.group == "serving.kserve.io" and obj.name in runtimes):
                continue
            _run(expander, obj, ctx, out)
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
