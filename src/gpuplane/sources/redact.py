"""Remove what a snapshot must not carry: env values, non-GPU ConfigMap data, applied configs.

A snapshot is meant to be attached to tickets and shared, so it keeps what the
engines reason about and drops what commonly holds credentials:

- every ``env[].value`` anywhere in an object (pods, pod templates of
  controllers and CRDs, ClusterPolicy component env) becomes ``<redacted>``;
  names and ``valueFrom`` references stay. Exception: the few variables that
  select GPUs or configure the device plugin (:data:`KEPT_ENV`): lint rules
  such as ``gpu-visible-devices-env`` read them and they hold device ids and
  modes, never credentials;
- ConfigMap ``data``/``binaryData`` values become ``<redacted>`` (keys stay)
  unless the ConfigMap is GPU-stack configuration (:func:`is_gpu_configmap`);
- the ``kubectl.kubernetes.io/last-applied-configuration`` annotation (a full
  copy of the object, env values included) and ``managedFields`` (bulk, no
  use to gpuplane) are dropped.

Secrets are never requested in the first place (sources/catalog.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

REDACTED = "<redacted>"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# GPU selection and device-plugin mode variables (NVIDIA container toolkit and
# k8s-device-plugin documentation): device ids / modes, kept for the lint rules.
KEPT_ENV = frozenset(
    {
        "NVIDIA_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "NVIDIA_MIG_CONFIG_DEVICES",
        "NVIDIA_MIG_MONITOR_DEVICES",
        "MIG_STRATEGY",
        "DEVICE_LIST_STRATEGY",
        "DEVICE_ID_STRATEGY",
        "PASS_DEVICE_SPECS",
        "FAIL_ON_INIT_ERROR",
    }
)

# ConfigMap names of the GPU stack: device-plugin configs (time-slicing, MPS,
# MIG strategy), mig-parted configs (GPU Operator default
# ``default-mig-parted-config``), GFD / DCGM configs.
_GPU_CONFIGMAP_NAME = re.compile(
    r"device-plugin|time-?slicing|mig-parted|mig-config|\bmps\b|gpu-feature-discovery|dcgm|gpu", re.IGNORECASE
)
# Content of a device-plugin config (``version: v1`` + ``sharing``/``flags``) or a mig-parted config.
_GPU_CONFIG_CONTENT = re.compile(r"^(?:mig-configs|sharing|flags):", re.MULTILINE)


def redact_object(
    obj: dict[str, Any], gpu_namespaces: Collection[str] = (), referenced: Collection[tuple[str, str]] = ()
) -> dict[str, Any]:
    """Redact one object in place (and return it) for a snapshot."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
    if obj.get("kind") == "ConfigMap" and obj.get("apiVersion", "v1") == "v1":
        if not is_gpu_configmap(obj, gpu_namespaces, referenced):
            for key in ("data", "binaryData"):
                values = obj.get(key)
                if isinstance(values, dict):
                    obj[key] = dict.fromkeys(values, REDACTED)
        return obj
    redact_env(obj)
    return obj


def redact_env(node: Any) -> None:
    """Replace ``value`` of every env var in ``node`` (iterative walk, any nesting)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                if key == "env" and isinstance(value, list):
                    for var in value:
                        if isinstance(var, dict) and "value" in var and var.get("name") not in KEPT_ENV:
                            var["value"] = REDACTED
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(current, list):
            stack.extend(item for item in current if isinstance(item, dict | list))


def is_gpu_configmap(
    obj: dict[str, Any], gpu_namespaces: Collection[str], referenced: Collection[tuple[str, str]] = ()
) -> bool:
    """Whether a ConfigMap is GPU-stack configuration whose data a snapshot keeps.

    Kept: a ConfigMap referenced by a ClusterPolicy (``devicePlugin.config.name``,
    ``migManager.config.name``), or one in a GPU-stack namespace whose name
    (device-plugin, time-slicing, mig-parted, ...) or content (a device-plugin
    config's ``sharing:``/``flags:``, mig-parted's ``mig-configs:``) says what it is.
    """
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    name = str(meta.get("name") or "")
    if (namespace, name) in referenced:
        return True
    if namespace not in gpu_namespaces:
        return False
    if _GPU_CONFIGMAP_NAME.search(name):
        return True
    data = obj.get("data")
    if isinstance(data, dict):
        return any(isinstance(v, str) and _GPU_CONFIG_CONTENT.search(v) for v in data.values())
    return False


def clusterpolicy_configmaps(
    objects: list[dict[str, Any]], operator_namespaces: Collection[str]
) -> set[tuple[str, str]]:
    """ConfigMaps a ClusterPolicy points at, as ``(namespace, name)`` in each operator namespace.

    The ClusterPolicy is cluster-scoped; its ConfigMaps live in the operator's
    namespace (reference/nvidia-gpu-stack.md: ``devicePlugin.config.name``,
    ``migManager.config.name``).
    """
    names: set[str] = set()
    for obj in objects:
        if obj.get("kind") != "ClusterPolicy":
            continue
        spec = obj.get("spec") or {}
        for component in ("devicePlugin", "migManager", "dcgmExporter"):
            config = (spec.get(component) or {}).get("config") or {}
            name = config.get("name") if isinstance(config, dict) else None
            if isinstance(name, str) and name:
                names.add(name)
    return {(ns, name) for ns in operator_namespaces for name in names}
