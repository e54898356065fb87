"""KServe ``serving.kserve.io/v1beta1`` InferenceService.

Each component (``predictor``, ``transformer``, ``explainer``) inlines a PodSpec plus
KServe's own fields (kserve/kserve ``pkg/apis/serving/v1beta1/component.go``,
``predictor.go``; CRD ``serving.kserve.io_inferenceservices.yaml``). The pod template is
built from those fields: PodSpec fields as they are, and the model (``model:`` or a framework
such as ``sklearn:``/``pytorch:``) becomes the first container ``kserve-container`` (on top of
the ServingRuntime's container when the runtime is given and known). Pods per component:
``minReplicas`` (default 1, 0 = scale to zero), ``maxReplicas`` as the upper bound.
Multi-node predictors (``workerSpec``, Standard/RawDeployment mode) add
``pipelineParallelSize − 1`` worker pods per head (KServe docs "Multi-node/Multi-GPU Inference").
"""

from __future__ import annotations

from gpuplane.k8s.manifest import Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    PodSet,
    Related,
    as_dict,
    as_int,
    as_list,
    as_str,
    nonneg,
)

COMPONENTS = ("predictor", "transformer", "explainer")
FRAMEWORKS = (
    "model",
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
    "art",
    "alibi",
)
# core/v1 PodSpec fields (staging/src/k8s.io/api/core/v1/types.go) that a component may inline
POD_SPEC_FIELDS = frozenset(
    {
        "activeDeadlineSeconds",
        "affinity",
        "automountServiceAccountToken",
        "containers",
        "dnsConfig",
        "dnsPolicy",
        "enableServiceLinks",
        "ephemeralContainers",
        "hostAliases",
        "hostIPC",
        "hostNetwork",
        "hostPID",
        "hostUsers",
        "hostname",
        "hostnameOverride",
        "imagePullSecrets",
        "initContainers",
        "nodeName",
        "nodeSelector",
        "os",
        "overhead",
        "preemptionPolicy",
        "priority",
        "priorityClassName",
        "readinessGates",
        "resourceClaims",
        "resources",
        "restartPolicy",
        "runtimeClassName",
        "schedulerName",
        "schedulingGates",
        "securityContext",
        "serviceAccount",
        "serviceAccountName",
        "setHostnameAsFQDN",
        "shareProcessNamespace",
        "subdomain",
        "terminationGracePeriodSeconds",
        "tolerations",
        "topologySpreadConstraints",
        "volumes",
    }
)
# ModelSpec fields that are not container fields
MODEL_ONLY_FIELDS = frozenset(
    {
        "modelFormat",
        "runtime",
        "runtimeVersion",
        "storageUri",
        "storage",
        "protocolVersion",
        "name",
        "confidential",
    }
)
MODEL_CONTAINER = "kserve-container"


def expand_inferenceservice(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    podsets: list[PodSet] = []
    for component in COMPONENTS:
        comp = spec.get(component)
        if not isinstance(comp, dict):
            continue
        template = _component_template(obj, comp, ctx.related)
        count = nonneg(as_int(comp.get("minReplicas"), 1))
        ps = PodSet(obj, component, component, count, template, ("spec", component), synthetic=True)
        ps.max_count = as_int(comp.get("maxReplicas"), None)
        podsets.append(ps)
        worker = comp.get("workerSpec")
        if component == "predictor" and isinstance(worker, dict):
            pipeline = nonneg(as_int(worker.get("pipelineParallelSize"), 1))
            workers = count * max(pipeline - 1, 0)
            if workers:
                worker_template = {
                    "metadata": template.get("metadata", {}),
                    "spec": {k: v for k, v in worker.items() if k in POD_SPEC_FIELDS},
                }
                podsets.append(
                    PodSet(
                        obj,
                        "worker",
                        "worker",
                        workers,
                        worker_template,
                        ("spec", "predictor", "workerSpec"),
                        synthetic=True,
                        distributed=True,
                    )
                )
                ps.distributed = True
    return finish(obj, podsets, ctx.related, kueue_whole=False)


def _component_template(obj: Manifest, comp: dict, related: Related | None) -> dict:
    pod_spec = {k: v for k, v in comp.items() if k in POD_SPEC_FIELDS}
    containers = [c for c in as_list(comp.get("containers")) if isinstance(c, dict)]
    model_key = next((k for k in FRAMEWORKS if isinstance(comp.get(k), dict)), None)
    if model_key is not None:
        model = comp[model_key]
        base = _runtime_container(obj, model, related)
        container = {
            **base,
            **{k: v for k, v in model.items() if k not in MODEL_ONLY_FIELDS},
            "name": MODEL_CONTAINER,
        }
        containers = [container, *containers]
    pod_spec["containers"] = containers
    labels = {**obj.labels, **as_dict(comp.get("labels"))}
    annotations = {**obj.annotations, **as_dict(comp.get("annotations"))}
    metadata: dict = {}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": pod_spec}


def _runtime_container(obj: Manifest, model: dict, related: Related | None) -> dict:
    """The ServingRuntime's model-server container (named ``kserve-container``, else the first)."""
    name = as_str(model.get("runtime"))
    if not name or related is None:
        return {}
    runtime = related.get("serving.kserve.io", "ServingRuntime", obj.namespace, name) or related.get(
        "serving.kserve.io", "ClusterServingRuntime", None, name
    )
    if runtime is None:
        return {}
    containers = [c for c in as_list(runtime.get("spec", "containers")) if isinstance(c, dict)]
    chosen = next(
        (c for c in containers if c.get("name") == MODEL_CONTAINER), containers[0] if containers else {}
    )
    return dict(chosen)
