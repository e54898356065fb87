"""Kubeflow training jobs: training-operator v1 (PyTorchJob, TFJob, XGBoostJob, PaddleJob,
MXJob, JAXJob, MPIJob v1), mpi-operator MPIJob v2beta1 and Trainer v2 TrainJob.

Facts (reference/scheduling.md §5, kubeflow/trainer release-1.9 ``pkg/apis/kubeflow.org/v1``
(MXJob: tag v1.8.1 ``mxnet_types.go``, the last release that served it),
kubeflow/mpi-operator ``pkg/apis/kubeflow/v2beta1/types.go``, kubeflow/trainer v2
``pkg/runtime/framework/plugins/{jobset/builder.go,mpi/mpi.go}``):
- ``<x>ReplicaSpecs`` maps a replica type (``Master``, ``Worker``, ``Chief``, ``PS``, ...) to
  ``replicas`` (default 1) and a pod template; PodSet names are the lower-cased types, as Kueue
  names them.
- ``runPolicy.schedulingPolicy`` (``minAvailable``, ``queue``, ``priorityClass``) configures the
  PodGroup the operator creates for its gang scheduler; ``minMember`` defaults to all replicas.
- TrainJob: the runtime's JobSet template is the pod source; the replicated job labelled
  ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` runs ``numNodes`` pods
  (``trainer.numNodes`` overrides ``mlPolicy.numNodes``; with MPI ``runLauncherAsNode`` one
  node is the launcher), and the trainer's image/command/args/env/``resourcesPerNode`` replace
  those of the containers named ``node`` (and ``launcher`` when it runs as a node).
"""

from __future__ import annotations

from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.workloads.gangs import VOLCANO_SCHEDULER, finish, volcano_queue
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
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

# kind -> the field holding its replica specs (training-operator v1, mpi-operator v2beta1)
REPLICA_FIELDS: dict[str, str] = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}

TRAINER_GROUP = "trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
INITIALIZER_ANCESTORS = ("dataset-initializer", "model-initializer")


def expand_replica_job(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """PyTorchJob / TFJob / XGBoostJob / PaddleJob / MXJob / JAXJob / MPIJob."""
    spec = as_dict(obj.data.get("spec"))
    field_name = REPLICA_FIELDS.get(obj.kind, "")
    replica_specs = as_dict(spec.get(field_name))
    run_policy = as_dict(spec.get("runPolicy"))
    suspended = run_policy.get("suspend") is True
    podsets: list[PodSet] = []
    for rtype, rspec in replica_specs.items():
        if not isinstance(rtype, str):
            continue
        template = ctx.template(obj, rspec, "template", ("spec", field_name, rtype, "template"))
        if template is None:
            continue
        replicas = nonneg(as_int(as_dict(rspec).get("replicas"), 1))
        name = rtype.lower()
        podsets.append(
            PodSet(
                obj,
                name,
                role_from_name(name, "worker"),
                replicas,
                template,
                ("spec", field_name, rtype, "template"),
            )
        )
    if not podsets:
        return []
    suspend(podsets, suspended)
    if obj.kind == "PyTorchJob":
        _elastic(spec, podsets)
    mark_distributed(podsets)
    policy = dig(run_policy, "schedulingPolicy")
    native = _operator_gang(obj, podsets, policy if isinstance(policy, dict) else None)
    priority = as_str(dig(policy, "priorityClass"))
    for ps in podsets:
        ps.priority_class = priority
    return finish(obj, podsets, ctx.related, native=native)


def _elastic(spec: dict, podsets: list[PodSet]) -> None:
    """PyTorch ``elasticPolicy``: workers may grow to ``maxReplicas``."""
    policy = as_dict(spec.get("elasticPolicy"))
    max_replicas = as_int(policy.get("maxReplicas"), None)
    if max_replicas is None:
        return
    for ps in podsets:
        if ps.name == "worker":
            ps.max_count = max_replicas


def _operator_gang(obj: Manifest, podsets: list[PodSet], policy: dict | None) -> Gang | None:
    """The PodGroup the operator creates (named after the job) when gang scheduling is on.

    Gang scheduling is an operator start-up option; it shows in a manifest either as
    ``runPolicy.schedulingPolicy`` or as pods sent to the Volcano scheduler.
    """
    volcano = any(dig(ps.template, "spec", "schedulerName") == VOLCANO_SCHEDULER for ps in podsets)
    if policy is None and not volcano:
        return None
    policy = policy or {}
    total = sum(ps.count for ps in podsets)
    min_member = as_int(policy.get("minAvailable"), None)
    queue = as_str(policy.get("queue"))
    if obj.kind == "MPIJob" and obj.api_version.endswith("v2beta1"):
        # mpi-operator (pkg/controller/podgroup.go): queue annotation wins over schedulingPolicy.queue
        queue = volcano_queue(obj.metadata) or queue
        mechanism = "volcano" if volcano else "mpi-operator"
    else:
        mechanism = "volcano" if volcano else "training-operator"
    return Gang(mechanism, obj.name, min_member if min_member is not None else total, queue)


# -- Trainer v2 --------------------------------------------------------------------------------


def expand_trainjob(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """TrainJob: pods of its runtime's JobSet, or one trainer PodSet when the runtime is unknown."""
    spec = as_dict(obj.data.get("spec"))
    trainer = as_dict(spec.get("trainer"))
    suspended = spec.get("suspend") is True
    runtime = _runtime(obj, spec, ctx)
    if runtime is None:
        num_nodes = nonneg(as_int(trainer.get("numNodes"), 1))
        template = {"spec": {"containers": [_trainer_container({"name": "node"}, trainer)]}}
        ps = PodSet(
            obj,
            "node",
            "trainer",
            num_nodes,
            template,
            ("spec", "trainer"),
            synthetic=True,
            distributed=num_nodes > 1 and not suspended,
            overrides=_overrides(obj, trainer, [0]),
        )
        return finish(obj, suspend([ps], suspended), ctx.related)

    rspec = as_dict(runtime.data.get("spec"))
    ml_policy = as_dict(rspec.get("mlPolicy"))
    num_nodes = nonneg(as_int(trainer.get("numNodes"), as_int(ml_policy.get("numNodes"), 1)))
    launcher_as_node = dig(ml_policy, "mpi", "runLauncherAsNode") is True
    podsets: list[PodSet] = []
    for index, rjob in enumerate(as_list(dig(rspec, "template", "spec", "replicatedJobs"))):
        name = as_str(dig(rjob, "name")) or f"job-{index}"
        job_spec = as_dict(dig(rjob, "template", "spec"))
        job_template = ctx.template(
            runtime,
            job_spec,
            "template",
            ("spec", "template", "spec", "replicatedJobs", index, "template", "spec", "template"),
        )
        if job_template is None:
            continue
        count, role = _replicated_job_pods(rjob, name, job_spec, num_nodes, launcher_as_node)
        targets = ("node", "launcher") if launcher_as_node else ("node",)
        patched = _patch_template(job_template, trainer, targets)
        path = ("spec", "template", "spec", "replicatedJobs", index, "template", "spec", "template")
        overrides: tuple[tuple[FieldPath, Manifest, FieldPath], ...] = ()
        if patched is not job_template:
            hit = [
                i
                for i, c in enumerate(as_list(dig(job_template, "spec", "containers")))
                if isinstance(c, dict) and c.get("name") in targets
            ]
            overrides = _overrides(obj, trainer, hit)
        podsets.append(
            PodSet(
                obj,
                name,
                role,
                count,
                patched,
                path,
                template_source=runtime,
                synthetic=patched is not job_template,
                overrides=overrides,
            )
        )
    if not podsets:
        return []
    suspend(podsets, suspended)
    total = mark_distributed(podsets)
    native = _trainer_gang(obj, rspec, total)
    return finish(obj, podsets, ctx.related, native=native)


def _replicated_job_pods(
    rjob: object, name: str, job_spec: dict, num_nodes: int, launcher_as_node: bool
) -> tuple[int, str]:
    """How many pods one replicated job of a runtime makes, and their role: the trainer job runs
    ``numNodes`` pods (one fewer when an MPI launcher counts as a node), initializers run as their
    Job spec says, any other job ``replicas`` times its Job's pods. Shared by a TrainJob and a
    runtime linted on its own, so both count the same pods."""
    ancestor = dig(rjob, "template", "metadata", "labels", ANCESTOR_LABEL)
    if ancestor == "trainer" or name == "node":
        count = max(num_nodes - 1, 1) if (launcher_as_node and name == "node" and num_nodes) else num_nodes
        return count, "trainer"
    if ancestor in INITIALIZER_ANCESTORS:
        return job_pod_count(job_spec), "initializer"
    replicas = nonneg(as_int(as_dict(rjob).get("replicas"), 1))
    return replicas * job_pod_count(job_spec), role_from_name(name, "worker")


def _runtime(obj: Manifest, spec: dict, ctx: ExpandContext) -> Manifest | None:
    ref = as_dict(spec.get("runtimeRef"))
    name = as_str(ref.get("name"))
    if not name or ctx.related is None:
        return None
    group = as_str(ref.get("apiGroup")) or TRAINER_GROUP
    kind = as_str(ref.get("kind")) or "ClusterTrainingRuntime"
    return ctx.related.get(group, kind, obj.namespace, name)


def _trainer_gang(obj: Manifest, runtime_spec: dict, total: int) -> Gang | None:
    """Runtime ``podGroupPolicy``: a PodGroup named after the TrainJob holding every pod."""
    policy = as_dict(runtime_spec.get("podGroupPolicy"))
    if "coscheduling" in policy:
        return Gang("coscheduling", obj.name, total)
    if "volcano" in policy:
        return Gang("volcano", obj.name, total, volcano_queue(obj.metadata))
    return None


def _overrides(
    obj: Manifest, trainer: dict, indexes: list[int]
) -> tuple[tuple[FieldPath, Manifest, FieldPath], ...]:
    """Which container fields of the trainer's containers (``indexes``) the TrainJob writes:
    ``image``, ``command``, ``args`` and ``resources`` (from ``resourcesPerNode``), as applied
    by :func:`_trainer_container`. ``env`` is merged item by item, so it keeps the runtime's path."""
    fields: list[tuple[str, FieldPath]] = [
        (key, ("spec", "trainer", key))
        for key in ("image", "command", "args")
        if trainer.get(key) is not None
    ]
    resources = trainer.get("resourcesPerNode")
    if isinstance(resources, dict) and (
        resources.get("limits") is not None or resources.get("requests") is not None
    ):
        fields.append(("resources", ("spec", "trainer", "resourcesPerNode")))
    return tuple(
        (("spec", "containers", i, key), obj, owner_path) for i in indexes for key, owner_path in fields
    )


def _trainer_container(container: dict, trainer: dict) -> dict:
    """A copy of ``container`` with the TrainJob trainer's overrides applied."""
    out = dict(container)
    for key in ("image", "command", "args"):
        if trainer.get(key) is not None:
            out[key] = trainer[key]
    resources = trainer.get("resourcesPerNode")
    if isinstance(resources, dict) and (
        resources.get("limits") is not None or resources.get("requests") is not None
    ):
        out["resources"] = {k: resources[k] for k in ("limits", "requests") if resources.get(k) is not None}
    env = [e for e in as_list(trainer.get("env")) if isinstance(e, dict)]
    if env:
        names = {e.get("name") for e in env}
        out["env"] = [e for e in as_list(out.get("env")) if dig(e, "name") not in names] + env
    return out


def _patch_template(template: dict, trainer: dict, targets: tuple[str, ...]) -> dict:
    """Shallow-copied template with trainer overrides on the target containers (or the original)."""
    containers = as_list(dig(template, "spec", "containers"))
    if not trainer or not any(dig(c, "name") in targets for c in containers):
        return template
    new_containers = [
        _trainer_container(c, trainer) if isinstance(c, dict) and c.get("name") in targets else c
        for c in containers
    ]
    return {**template, "spec": {**as_dict(template.get("spec")), "containers": new_containers}}


def expand_trainingruntime(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    """A TrainingRuntime / ClusterTrainingRuntime on its own (no TrainJob of the input uses it):
    the pods one TrainJob without overrides would get (kubeflow/trainer ``pkg/apis/trainer/v1alpha1/
    trainingruntime_types.go``: ``spec.mlPolicy.numNodes`` trainer nodes, ``spec.template`` a JobSet
    template, ``spec.podGroupPolicy``), so its templates are checked where they are written."""
    spec = as_dict(obj.data.get("spec"))
    ml_policy = as_dict(spec.get("mlPolicy"))
    num_nodes = nonneg(as_int(ml_policy.get("numNodes"), 1))
    launcher_as_node = dig(ml_policy, "mpi", "runLauncherAsNode") is True
    podsets: list[PodSet] = []
    for index, rjob in enumerate(as_list(dig(spec, "template", "spec", "replicatedJobs"))):
        name = as_str(dig(rjob, "name")) or f"job-{index}"
        job_spec = as_dict(dig(rjob, "template", "spec"))
        path = ("spec", "template", "spec", "replicatedJobs", index, "template", "spec", "template")
        template = ctx.template(obj, job_spec, "template", path)
        if template is None:
            continue
        count, role = _replicated_job_pods(rjob, name, job_spec, num_nodes, launcher_as_node)
        podsets.append(PodSet(obj, name, role, count, template, path))
    if not podsets:
        return []
    total = mark_distributed(podsets)
    return finish(obj, podsets, ctx.related, native=_trainer_gang(obj, spec, total))
