"""Serving operators whose pods come from their own fields: KServe ServingRuntimes on their own,
Knative Service, KAITO Workspace / InferenceSet, NVIDIA NIMService / NIMCache, NVIDIA Dynamo
DynamoGraphDeployment.

- KServe ``serving.kserve.io/v1alpha1`` ServingRuntime / ClusterServingRuntime (kserve/kserve
  ``pkg/apis/serving/v1alpha1/servingruntime_types.go``): ``spec`` inlines a
  ``ServingRuntimePodSpec`` (``containers``, ``volumes``, ``nodeSelector``, ``tolerations`` ...), so
  the object is its own template (path ``()``, as a bare Pod). Expanded only when no
  InferenceService of the input names it (then the runtime's container is checked through it).
- Knative ``serving.knative.dev/v1`` Service (knative/serving ``pkg/apis/serving/v1/
  service_types.go``, ``revision_types.go``): ``spec.template`` is a ``RevisionTemplateSpec`` whose
  ``spec`` inlines a PodSpec; pods start at ``autoscaling.knative.dev/initial-scale`` (default 1),
  never below ``min-scale``, at most ``max-scale`` (``pkg/apis/autoscaling/register.go``).
- KAITO ``kaito.sh`` Workspace (kaito-project/kaito ``api/v1beta1/workspace_types.go``): top-level
  ``resource`` (``count``, ``instanceType``, ``labelSelector``) and ``inference.template`` (a
  ``PodTemplateSpec``); KAITO runs the template as a StatefulSet of ``resource.count`` pods (default
  1) and adds its GPU tolerations (``pkg/workspace/manifests/manifests.go``
  ``GenerateManifestWithPodTemplate``, ``pkg/workspace/inference/preset_inferences.go``
  ``defaultTolerations``). A preset Workspace (``inference.preset``) has no template: its pods are
  built from KAITO's preset catalogue and the instance type, which are not modelled. InferenceSet
  (``api/v1beta1/inferenceset_types.go``): ``replicas`` Workspaces of ``template``.
- NVIDIA NIM operator ``apps.nvidia.com/v1alpha1`` (NVIDIA/k8s-nim-operator ``api/apps/v1alpha1/
  nimservice_types.go``, ``nimcache_types.go``, ``common_types.go``): a NIMService's pod is built
  from ``image`` (``repository:tag``), ``command``, ``args``, ``env``, ``resources``,
  ``nodeSelector``, ``tolerations``, ``affinity``, ``schedulerName``, ``runtimeClassName``,
  ``priorityClassName``; container ``<name>-ctr``; probes on port ``api`` unless disabled
  (``GetDefault*Probe``); a memory ``emptyDir`` ``dshm`` at ``/dev/shm`` (``GetVolumes``) and the
  model store at ``/model-store``; replicas ``spec.replicas``, or ``scale.hpa.minReplicas`` with
  autoscaling; with ``multiNode``, each replica is a LeaderWorkerSet group of
  ``multiNode.parallelism.pipeline`` pods (``GetLWSSize``). A NIMCache runs one caching Job with the model puller image and ``resources`` (cpu,
  memory).
- NVIDIA Dynamo ``nvidia.com/v1alpha1`` DynamoGraphDeployment (ai-dynamo/dynamo
  ``deploy/cloud/operator/api/v1alpha1/dynamocomponentdeployment_types.go``, ``common.go``):
  ``spec.services`` maps a component name to ``replicas``, ``resources`` (``requests``/``limits``
  with ``cpu``, ``memory``, ``gpu`` of ``gpuType`` default ``nvidia.com/gpu``, ``custom``),
  ``envs``, ``extraPodSpec`` (a PodSpec plus ``mainContainer``), ``multinode.nodeCount`` (pods per
  replica), ``sharedMemory`` (the operator mounts a memory-backed ``/dev/shm`` unless disabled).
  The main container keeps the name the user gives it (``main`` here when none is given); the
  operator's default probes (by component type) are not modelled, so Dynamo graphs are not in
  lint's serving group (``lint/kinds.py``) and only the generic container and GPU checks read them.
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.fields import annotation_int
from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.objects import Toleration, to_dict
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    nonneg,
    role_from_name,
)

# -- KServe runtimes --------------------------------------------------------------------------


def expand_servingruntime(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list):
        return []
    ps = PodSet(obj, obj.name or "runtime", "server", 1, obj.data, (), count_known=False)
    return finish(obj, [ps], ctx.related, kueue_whole=False)


def referenced_runtimes(objects: list[Manifest]) -> set[str]:
    """Names of the ServingRuntimes the InferenceServices of ``objects`` name (``model.runtime``)."""
    names: set[str] = set()
    for obj in objects:
        if obj.kind != "InferenceService" or obj.group != "serving.kserve.io":
            continue
        for component in ("predictor", "transformer", "explainer"):
            comp = as_dict(dig(obj.data, "spec", component))
            for value in comp.values():
                runtime = as_str(value.get("runtime")) if isinstance(value, dict) else None
                if runtime:
                    names.add(runtime)
    return names


# -- Knative ------------------------------------------------------------------------------------

KNATIVE_MIN_SCALE = "autoscaling.knative.dev/min-scale"
KNATIVE_MAX_SCALE = "autoscaling.knative.dev/max-scale"
KNATIVE_INITIAL_SCALE = "autoscaling.knative.dev/initial-scale"


def expand_knative_service(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    template = ctx.template(obj, obj.data.get("spec"), "template", ("spec", "template"))
    if template is None:
        return []
    annotations = as_dict(as_dict(template.get("metadata")).get("annotations"))
    minimum = annotation_int(annotations.get(KNATIVE_MIN_SCALE)) or 0
    initial = annotation_int(annotations.get(KNATIVE_INITIAL_SCALE))
    count = max(initial if initial is not None else 1, minimum)
    ps = PodSet(obj, obj.name, "server", count, template, ("spec", "template"))
    ps.max_count = annotation_int(annotations.get(KNATIVE_MAX_SCALE)) or None
    return finish(obj, [ps], ctx.related, kueue_whole=False)


# -- KAITO --------------------------------------------------------------------------------------

KAITO_TOLERATIONS = (
    Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),
    Toleration(key="sku", operator="Equal", value="gpu", effect="NoSchedule"),
)


def _kaito_podset(
    obj: Manifest, ctx: ExpandContext, inference: Any, base: FieldPath, count: int
) -> PodSet | None:
    template = ctx.template(obj, inference, "template", (*base, "template"))
    if template is None:
        return None
    ps = PodSet(obj, obj.name, "server", count, template, (*base, "template"))
    ps.injected = {"spec": {"tolerations": [to_dict(t) for t in KAITO_TOLERATIONS]}}
    return ps


def expand_kaito_workspace(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    count = nonneg(as_int(dig(obj.data, "resource", "count"), 1))
    ps = _kaito_podset(obj, ctx, obj.data.get("inference"), ("inference",), count)
    return finish(obj, [ps], ctx.related, kueue_whole=False) if ps else []


def expand_kaito_inferenceset(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    replicas = nonneg(as_int(spec.get("replicas"), 1))
    base = ("spec", "template", "inference")
    ps = _kaito_podset(obj, ctx, dig(spec, "template", "inference"), base, replicas)
    return finish(obj, [ps], ctx.related, kueue_whole=False) if ps else []


# -- NVIDIA NIM operator -------------------------------------------------------------------------

_NIM_PORT = "api"


def _nim_probe(spec: dict, key: str, path: str, delay: int, failures: int) -> dict | None:
    probe = as_dict(spec.get(key))
    if probe.get("enabled") is False:
        return None
    given = probe.get("probe")
    if isinstance(given, dict):
        return given
    return {
        "initialDelaySeconds": delay,
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": failures,
        "httpGet": {"path": path, "port": _NIM_PORT},
    }


def _direct(spec: dict, pod_spec: dict, keys: tuple[str, ...], moves: list, prefix: FieldPath) -> None:
    for key in keys:
        if spec.get(key) is not None:
            pod_spec[key] = spec[key]
            moves.append(((*prefix, key), ("spec", key)))


def expand_nimservice(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    image = as_dict(spec.get("image"))
    moves: list[tuple[FieldPath, FieldPath]] = []
    c_path: FieldPath = ("spec", "containers", 0)
    container: dict[str, Any] = {
        "name": f"{obj.name}-ctr",
        "image": f"{as_str(image.get('repository')) or ''}:{as_str(image.get('tag')) or ''}",
    }
    moves.append(((*c_path, "image"), ("spec", "image")))
    if as_str(image.get("pullPolicy")):
        container["imagePullPolicy"] = image["pullPolicy"]
        moves.append(((*c_path, "imagePullPolicy"), ("spec", "image", "pullPolicy")))
    _direct(spec, container, ("command", "args", "env", "resources"), moves, c_path)
    container["ports"] = [{"name": _NIM_PORT, "containerPort": 8000, "protocol": "TCP"}]
    for key, path, delay, failures in (
        ("livenessProbe", "/v1/health/live", 15, 3),
        ("readinessProbe", "/v1/health/ready", 15, 3),
        ("startupProbe", "/v1/health/ready", 30, 120),
    ):
        probe = _nim_probe(spec, key, path, delay, failures)
        if probe is not None:
            container[key] = probe
            moves.append(((*c_path, key), ("spec", key)))
    container["volumeMounts"] = [{"name": "model-store", "mountPath": "/model-store"}]
    storage = as_dict(spec.get("storage"))
    pod_spec: dict[str, Any] = {"containers": [container], "volumes": [_nim_store(storage)]}
    _direct(
        spec,
        pod_spec,
        ("nodeSelector", "tolerations", "affinity", "schedulerName", "runtimeClassName", "priorityClassName"),
        moves,
        ("spec",),
    )
    scale = as_dict(spec.get("scale"))
    if scale.get("enabled") is True:
        count = nonneg(as_int(dig(scale, "hpa", "minReplicas"), 1))
        maximum = as_int(dig(scale, "hpa", "maxReplicas"), None)
    else:
        count, maximum = nonneg(as_int(spec.get("replicas"), 1)), None
    # multi-node: a LeaderWorkerSet of groups sized by the pipeline parallelism (GetLWSSize)
    group = (
        nonneg(as_int(dig(spec, "multiNode", "parallelism", "pipeline"), 0)) if spec.get("multiNode") else 0
    )
    count *= max(group, 1)
    labels = as_dict(spec.get("labels"))
    template = {"metadata": {"labels": dict(labels)} if labels else {}, "spec": pod_spec}
    ps = PodSet(
        obj,
        obj.name,
        "server",
        count,
        template,
        ("spec",),
        synthetic=True,
        closed=True,
        overrides=tuple((rel, obj, owner) for rel, owner in moves),
        managed_shm="NIM",
        distributed=group > 1,
    )
    ps.max_count = maximum * max(group, 1) if maximum is not None else None
    return finish(obj, [ps], ctx.related, kueue_whole=False)


def _nim_store(storage: dict) -> dict:
    """The ``model-store`` volume: the NIMCache's or the given PVC, a hostPath, else an emptyDir."""
    if isinstance(storage.get("hostPath"), str):
        return {"name": "model-store", "hostPath": {"path": storage["hostPath"]}}
    if isinstance(storage.get("pvc"), dict) or isinstance(storage.get("nimCache"), dict):
        claim = (
            as_str(dig(storage, "pvc", "name")) or as_str(dig(storage, "nimCache", "name")) or "model-store"
        )
        return {"name": "model-store", "persistentVolumeClaim": {"claimName": claim}}
    empty = storage.get("emptyDir")
    return {"name": "model-store", "emptyDir": dict(empty) if isinstance(empty, dict) else {}}


def expand_nimcache(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    source = as_dict(spec.get("source"))
    puller = as_str(dig(source, "ngc", "modelPuller")) or as_str(dig(source, "hf", "modelPuller")) or ""
    moves: list[tuple[FieldPath, FieldPath]] = [(("spec", "containers", 0, "image"), ("spec", "source"))]
    requests = {k: v for k, v in as_dict(spec.get("resources")).items() if k in ("cpu", "memory") and v}
    container: dict[str, Any] = {"name": "nim-cache-ctr", "image": puller}
    if requests:
        container["resources"] = {"requests": requests}
        moves.append((("spec", "containers", 0, "resources"), ("spec", "resources")))
    _direct(spec, container, ("env",), moves, ("spec", "containers", 0))
    pod_spec: dict[str, Any] = {"containers": [container], "restartPolicy": "Never"}
    _direct(spec, pod_spec, ("nodeSelector", "tolerations", "runtimeClassName"), moves, ("spec",))
    ps = PodSet(
        obj,
        "cache-job",
        "pod",
        1,
        {"spec": pod_spec},
        ("spec",),
        synthetic=True,
        closed=True,
        overrides=tuple((rel, obj, owner) for rel, owner in moves),
    )
    return finish(obj, [ps], ctx.related)


# -- NVIDIA Dynamo ------------------------------------------------------------------------------


def _dynamo_resources(resources: dict) -> dict:
    out: dict[str, dict] = {}
    for kind in ("requests", "limits"):
        item = as_dict(resources.get(kind))
        block: dict[str, Any] = {}
        for key in ("cpu", "memory"):
            if as_str(item.get(key)):
                block[key] = item[key]
        if as_str(item.get("gpu")):
            block[as_str(item.get("gpuType")) or "nvidia.com/gpu"] = item["gpu"]
        block.update({k: v for k, v in as_dict(item.get("custom")).items() if isinstance(k, str)})
        if block:
            out[kind] = block
    return out


def expand_dynamo_graph(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    podsets: list[PodSet] = []
    for name, service in as_dict(dig(obj.data, "spec", "services")).items():
        if not isinstance(name, str) or not isinstance(service, dict):
            continue
        base: FieldPath = ("spec", "services", name)
        extra = as_dict(service.get("extraPodSpec"))
        main = as_dict(extra.get("mainContainer"))
        moves: list[tuple[FieldPath, FieldPath]] = [
            (("spec", key), (*base, "extraPodSpec", key))
            for key in extra
            if key not in ("mainContainer", "containers")
        ]
        container = dict(main) or {"name": "main"}
        container.setdefault("name", "main")
        moves += [
            (("spec", "containers", 0, key), (*base, "extraPodSpec", "mainContainer", key)) for key in main
        ]
        resources = _dynamo_resources(as_dict(service.get("resources")))
        if resources:
            container["resources"] = resources
            moves.append((("spec", "containers", 0, "resources"), (*base, "resources")))
        envs = [e for e in as_list(service.get("envs")) if isinstance(e, dict)]
        if envs:
            container["env"] = [*as_list(container.get("env")), *envs]
        others = [c for c in as_list(extra.get("containers")) if isinstance(c, dict)]
        moves += [
            (("spec", "containers", 1 + i), (*base, "extraPodSpec", "containers", i))
            for i in range(len(others))
        ]
        pod_spec = {k: v for k, v in extra.items() if k not in ("mainContainer", "containers")}
        pod_spec["containers"] = [container, *others]
        replicas = nonneg(as_int(service.get("replicas"), 1))
        nodes = nonneg(as_int(dig(service, "multinode", "nodeCount"), 1)) if service.get("multinode") else 1
        shm = None if as_dict(service.get("sharedMemory")).get("disabled") is True else "Dynamo"
        component = as_str(service.get("subComponentType")) or as_str(service.get("componentType")) or name
        podsets.append(
            PodSet(
                obj,
                name,
                role_from_name(component, "server"),
                replicas * nodes,
                {"metadata": {"labels": dict(as_dict(service.get("labels")))}, "spec": pod_spec},
                base,
                synthetic=True,
                closed=True,
                overrides=tuple((rel, obj, owner) for rel, owner in moves),
                managed_shm=shm,
                distributed=nodes > 1,
            )
        )
    return finish(obj, podsets, ctx.related, kueue_whole=False)
