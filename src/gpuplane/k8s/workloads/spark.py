"""Spark operator ``sparkoperator.k8s.io/v1beta2`` SparkApplication.

The operator (kubeflow/spark-operator ``api/v1beta2/sparkapplication_types.go``) hands the
driver/executor settings to spark-submit, which builds the pods: CPU request =
``coreRequest`` or ``cores`` (default 1), CPU limit = ``coreLimit``; memory request = limit =
``memory`` (default ``1g``) + overhead, overhead = ``memoryOverhead`` or
max(384 MiB, factor × memory) with factor ``memoryOverheadFactor`` or 0.1 for JVM apps and 0.4
for Python/R (Spark ``spark.kubernetes.memoryOverheadFactor``); ``gpu: {name, quantity}`` becomes
an extended-resource limit. Executors: ``executor.instances``, else dynamic allocation's
``initialExecutors``/``minExecutors``, else Spark's default of 2.
With ``batchScheduler: volcano`` the operator creates PodGroup ``spark-<app>-pg`` with
``minMember: 1`` (only the driver must start; executors follow).
"""

from __future__ import annotations

import re

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
)
from gpuplane.sources.manifest import Manifest

_SPARK_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_MIB_PER_UNIT = {"": 1.0, "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0**2, "p": 1024.0**3}
MIN_OVERHEAD_MIB = 384
DEFAULT_EXECUTORS = 2
CONTAINER_NAMES = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}


def spark_mib(value: object, default: float) -> float:
    """A Spark (JVM) size such as ``512m``, ``4g``, ``2048`` (MiB) in MiB."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    match = _SPARK_SIZE.match(value) if isinstance(value, str) else None
    if not match:
        return default
    return float(match.group(1)) * _MIB_PER_UNIT[match.group(2).lower()]


def expand_sparkapplication(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    spec = as_dict(obj.data.get("spec"))
    podsets = []
    for role in ("driver", "executor"):
        role_spec = as_dict(spec.get(role))
        count = 1 if role == "driver" else _executors(spec, role_spec)
        ps = PodSet(obj, role, role, count, _template(spec, role_spec, role), ("spec", role), synthetic=True)
        if role == "executor":
            dyn = as_dict(spec.get("dynamicAllocation"))
            if dyn.get("enabled") is True:
                ps.max_count = as_int(dyn.get("maxExecutors"), None)
        podsets.append(ps)
    options = as_dict(spec.get("batchSchedulerOptions"))
    native = None
    if spec.get("batchScheduler") == "volcano":
        native = Gang("volcano", f"spark-{obj.name}-pg", 1, as_str(options.get("queue")))
    for ps in podsets:
        ps.priority_class = as_str(options.get("priorityClassName"))
    return finish(obj, podsets, ctx.related, native=native)


def _executors(spec: dict, executor: dict) -> int:
    instances = as_int(executor.get("instances"), None)
    if instances is not None:
        return nonneg(instances)
    dyn = as_dict(spec.get("dynamicAllocation"))
    if dyn.get("enabled") is True:
        initial = as_int(dyn.get("initialExecutors"), None)
        return nonneg(initial if initial is not None else as_int(dyn.get("minExecutors"), 0))
    return DEFAULT_EXECUTORS


def _template(spec: dict, role_spec: dict, role: str) -> dict:
    memory = spark_mib(role_spec.get("memory"), 1024.0)
    if role_spec.get("memoryOverhead") is not None:
        overhead = spark_mib(role_spec.get("memoryOverhead"), MIN_OVERHEAD_MIB)
    else:
        factor = _factor(spec)
        overhead = max(MIN_OVERHEAD_MIB, factor * memory)
    pod_memory = f"{int(memory + overhead)}Mi"
    cores = role_spec.get("coreRequest") or role_spec.get("cores") or 1
    requests: dict = {"cpu": str(cores), "memory": pod_memory}
    limits: dict = {"memory": pod_memory}
    if role_spec.get("coreLimit") is not None:
        limits["cpu"] = str(role_spec["coreLimit"])
    gpu = as_dict(role_spec.get("gpu"))
    if as_str(gpu.get("name")) and as_int(gpu.get("quantity"), None) is not None:
        limits[gpu["name"]] = gpu["quantity"]
    container: dict = {
        "name": CONTAINER_NAMES[role],
        "image": role_spec.get("image") or spec.get("image"),
        "resources": {"requests": requests, "limits": limits},
    }
    for key in ("env", "envFrom", "volumeMounts", "ports", "securityContext"):
        if role_spec.get(key) is not None:
            container[key] = role_spec[key]
    pod_spec: dict = {"containers": [container, *[c for c in as_list(role_spec.get("sidecars")) if isinstance(c, dict)]]}
    node_selector = {**as_dict(spec.get("nodeSelector")), **as_dict(role_spec.get("nodeSelector"))}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    for key in ("tolerations", "affinity", "initContainers", "hostNetwork", "dnsConfig", "priorityClassName",
                "topologySpreadConstraints", "runtimeClassName"):
        if role_spec.get(key) is not None:
            pod_spec[key] = role_spec[key]
    scheduler = role_spec.get("schedulerName") or spec.get("batchScheduler")
    if scheduler:
        pod_spec["schedulerName"] = scheduler
    if "priorityClassName" not in pod_spec and as_str(as_dict(spec.get("batchSchedulerOptions")).get("priorityClassName")):
        pod_spec["priorityClassName"] = spec["batchSchedulerOptions"]["priorityClassName"]
    if role_spec.get("serviceAccount"):
        pod_spec["serviceAccountName"] = role_spec["serviceAccount"]
    if spec.get("volumes") is not None:
        pod_spec["volumes"] = spec["volumes"]
    if role == "driver":
        pod_spec["restartPolicy"] = "Never"
    metadata: dict = {}
    for key in ("labels", "annotations"):
        if isinstance(role_spec.get(key), dict):
            metadata[key] = role_spec[key]
    return {"metadata": metadata, "spec": pod_spec}


def _factor(spec: dict) -> float:
    raw = spec.get("memoryOverheadFactor")
    try:
        if raw is not None and not isinstance(raw, bool):
            return float(raw)
    except (TypeError, ValueError):
        pass
    return 0.4 if spec.get("type") in ("Python", "R") else 0.1
