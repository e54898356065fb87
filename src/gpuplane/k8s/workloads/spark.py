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

import math
import re

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
    nonneg,
)

# Spark's byte strings (apache/spark common/network-common/.../util/JavaUtils.java
# ``byteStringAs``): lower-cased and trimmed, then ``([0-9]+)([a-z]+)?`` with a suffix from
# ``byteSuffixes``; anything else (fractions such as ``1.5g`` included: "Fractional values are
# not supported") is a NumberFormatException, so spark-submit never creates the pods.
_SPARK_SIZE = re.compile(r"([0-9]+)([a-z]+)?")
# Suffix -> the unit's size as a power of 1024 bytes (JavaUtils.byteSuffixes, ByteUnit).
_SUFFIX_POWER = {"b": 0, "k": 1, "kb": 1, "m": 2, "mb": 2, "g": 3, "gb": 3, "t": 4, "tb": 4, "p": 5, "pb": 5}
_MIB_POWER = 2
_JAVA_LONG_MAX = (1 << 63) - 1
MIN_OVERHEAD_MIB = 384
DEFAULT_EXECUTORS = 2
CONTAINER_NAMES = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}


class SparkSizeError(ValueError):
    """A size spark-submit refuses (``byteStringAsMib`` throws): the application gets no pods."""


def spark_mib(value: object, default: int) -> int:
    """A Spark (JVM) size such as ``512m``, ``4g`` or ``2048`` (MiB) in whole MiB, as
    ``JavaUtils.byteStringAsMib`` computes it; ``default`` when the field is unset.

    Integer arithmetic like ``ByteUnit.convertTo``: a smaller unit is divided down and
    truncated (``512k`` -> 0 MiB, ``1536k`` -> 1 MiB), a larger one multiplied, refusing a
    result past Java's ``Long.MAX_VALUE``. A YAML integer is the digits without suffix (MiB).
    Raises :class:`SparkSizeError` for what Spark refuses: fractions (``1.5g``), unknown
    suffixes, non-numbers (``.inf``), values that overflow a Java long.
    """
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SparkSizeError(f"Failed to parse byte string: {value}")
    match = _SPARK_SIZE.fullmatch(str(value).lower().strip())
    if match is None:
        raise SparkSizeError(f"Failed to parse byte string: {value}")
    number = int(match.group(1))
    suffix = match.group(2)
    if number > _JAVA_LONG_MAX:  # Long.parseLong
        raise SparkSizeError(f"Failed to parse byte string: {value}")
    if suffix is not None and suffix not in _SUFFIX_POWER:
        raise SparkSizeError(f'Invalid suffix: "{suffix}"')
    power = _SUFFIX_POWER[suffix] if suffix is not None else _MIB_POWER
    if power >= _MIB_POWER:
        ratio = 1024 ** (power - _MIB_POWER)
        if _JAVA_LONG_MAX // ratio < number:
            raise SparkSizeError(f"Conversion of {number} exceeds Long.MAX_VALUE in MiB")
        return number * ratio
    return number // 1024 ** (_MIB_POWER - power)


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
    memory = spark_mib(role_spec.get("memory"), 1024)
    if role_spec.get("memoryOverhead") is not None:
        overhead = spark_mib(role_spec.get("memoryOverhead"), MIN_OVERHEAD_MIB)
    else:
        # BasicDriverFeatureStep / BasicExecutorFeatureStep:
        # max((memoryOverheadFactor * memoryMiB).toInt, MEMORY_OVERHEAD_MIN_MIB).
        factor = _factor(spec)
        overhead = max(MIN_OVERHEAD_MIB, int(factor * memory))
    pod_memory = f"{memory + overhead}Mi"
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
    pod_spec: dict = {
        "containers": [container, *[c for c in as_list(role_spec.get("sidecars")) if isinstance(c, dict)]]
    }
    node_selector = {**as_dict(spec.get("nodeSelector")), **as_dict(role_spec.get("nodeSelector"))}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    for key in (
        "tolerations",
        "affinity",
        "initContainers",
        "hostNetwork",
        "dnsConfig",
        "priorityClassName",
        "topologySpreadConstraints",
        "runtimeClassName",
    ):
        if role_spec.get(key) is not None:
            pod_spec[key] = role_spec[key]
    scheduler = role_spec.get("schedulerName") or spec.get("batchScheduler")
    if scheduler:
        pod_spec["schedulerName"] = scheduler
    if "priorityClassName" not in pod_spec and as_str(
        as_dict(spec.get("batchSchedulerOptions")).get("priorityClassName")
    ):
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
            factor = float(raw)
            if math.isfinite(factor) and factor >= 0:
                return factor
    except (TypeError, ValueError):
        pass
    return 0.4 if spec.get("type") in ("Python", "R") else 0.1
