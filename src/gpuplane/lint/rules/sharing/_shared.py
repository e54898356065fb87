"""Helpers shared by the rule modules of this package (split from ``sharing.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lazy_pattern import LazyPattern
from gpuplane.lint import kinds
from gpuplane.lint.context import pod_spec
from gpuplane.lint.rules._common import as_dict, as_str, dict_items
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.gpu.device_plugin import DevicePluginConfig
    from gpuplane.gpu.resources import GpuResource
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import ContainerRef, LintContext

MIG_PARTED_KEY = "config.yaml"
# A ConfigMap data value that looks like a device-plugin config (top-level keys of
# api/config/v1/config.go) or a mig-parted config.
_DP_HINT = LazyPattern(r"^(sharing|flags)\s*:", re.MULTILINE)
_MIG_HINT = LazyPattern(r"^mig-configs\s*:", re.MULTILINE)


def _classify(name: str) -> GpuResource | None:
    from gpuplane.gpu.resources import classify  # deferred for start-up time

    return classify(name) if isinstance(name, str) else None


def _container_requests(c: ContainerRef) -> Iterator[tuple[str, int, FieldPath]]:
    """Accelerator requests of one container with the field that states each."""
    for name, count in c.gpu_requests().items():
        kind = "limits" if name in c.resources("limits") else "requests"
        yield name, count, (*c.path, "resources", kind, name)


def _configmap_data(cm: Manifest) -> dict[str, Any]:
    data = cm.data.get("data")
    return data if isinstance(data, dict) else {}


# -- which ConfigMaps are device-plugin configs ------------------------------------------------


def _referenced_dp_configmaps(ctx: LintContext) -> dict[str, list[tuple[Manifest, FieldPath]]]:
    """ConfigMap name -> (object, field) that points the device plugin at it: ClusterPolicy
    ``devicePlugin.config.name`` and configMap volumes of device-plugin DaemonSets. Gathered once
    per run for the device-plugin rules (each walked every pod set; do not mutate)."""
    return ctx.once("sharing.referenced_dp_configmaps", lambda: _gather_dp_configmaps(ctx))


def _gather_dp_configmaps(ctx: LintContext) -> dict[str, list[tuple[Manifest, FieldPath]]]:
    refs: dict[str, list[tuple[Manifest, FieldPath]]] = {}
    for cp in ctx.by_kind("ClusterPolicy", "nvidia.com", include_cluster=True):
        name = cp.get("spec", "devicePlugin", "config", "name")
        if isinstance(name, str) and name:
            refs.setdefault(name, []).append((cp, ("spec", "devicePlugin", "config", "name")))
    for ps in ctx.podsets:
        if not kinds.is_daemon(ps) or not _is_device_plugin(ps):
            continue
        for i, vol in dict_items(pod_spec(ps).get("volumes")):
            cm = vol.get("configMap")
            if isinstance(cm, dict) and cm.get("name"):
                refs.setdefault(str(cm["name"]), []).append((ps.source, (*ps.spec_path, "volumes", i)))
    for ds in ctx.by_kind("DaemonSet", "apps", include_cluster=True):
        for i, vol in dict_items(ds.get("spec", "template", "spec", "volumes")):
            cm = vol.get("configMap")
            if (
                isinstance(cm, dict)
                and cm.get("name")
                and _template_is_device_plugin(ds.get("spec", "template"))
            ):
                refs.setdefault(str(cm["name"]), []).append((ds, ("spec", "template", "spec", "volumes", i)))
    return refs


def _template_is_device_plugin(template: Any) -> bool:
    for _i, c in dict_items(as_dict(as_dict(template).get("spec")).get("containers")):
        image = as_str(c.get("image"))
        if "device-plugin" in image and "nvidia" in image:
            return True
    return False


def _is_device_plugin(ps: PodSet) -> bool:
    return _template_is_device_plugin(ps.template)


def _dp_configs(ctx: LintContext) -> list[tuple[Manifest, dict[str, tuple[DevicePluginConfig | None, list]]]]:
    """Input ConfigMaps holding device-plugin configs, each parsed key by key."""
    referenced = _referenced_dp_configmaps(ctx)
    out = []
    for cm in ctx.by_kind("ConfigMap", ""):
        data = _configmap_data(cm)
        if not data:
            continue
        texts = [v for v in data.values() if isinstance(v, str)]
        if any(_MIG_HINT.search(t) for t in texts):
            continue  # a mig-parted config (mig-config-invalid)
        if cm.name not in referenced and not any(_DP_HINT.search(t) for t in texts):
            continue
        from gpuplane.gpu.device_plugin import configs_from_configmap  # deferred for start-up time

        out.append((cm, configs_from_configmap(data)))
    return out
