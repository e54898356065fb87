"""NVIDIA device-plugin config files and ConfigMaps: valid, and referenced by someone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.gpu.config_files import DEVICE_PLUGIN_CONFIG_KIND
from gpuplane.k8s.kindless import PSEUDO_GROUP
from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules.sharing._shared import (
    _dp_configs,
    _referenced_dp_configmaps,
    _template_is_device_plugin,
)
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

DP_CONFIG_LABEL = "nvidia.com/device-plugin.config"


@rule(
    id="device-plugin-config-invalid",
    severity="error",
    category="sharing",
    summary="NVIDIA device-plugin config malformed (version, replicas < 2, unknown resource, MIG strategy, YAML).",
)
def device_plugin_config_invalid(ctx: LintContext) -> Iterator[Finding]:
    sources: list[tuple[Manifest, str, FieldPath | None, list]] = [
        (cm, f"Device-plugin config {key} in {obj_label(cm)}", ("data", key), problems)
        for cm, parsed in _dp_configs(ctx)
        for key, (_cfg, problems) in parsed.items()
    ]
    for obj in ctx.by_kind(DEVICE_PLUGIN_CONFIG_KIND, PSEUDO_GROUP):
        # A config file (pseudo-object, data = the document): problems point at their own lines.
        # deferred for start-up time: only input holding a config file needs the parser
        from gpuplane.gpu.device_plugin import parse_device_plugin_config

        _cfg, problems = parse_device_plugin_config(obj.data.get("data") or {})
        sources.append((obj, f"Device-plugin config file {obj.name}", None, problems))
    for obj, label, anchor, problems in sources:
        for problem in problems:
            where = ".".join(str(p) for p in problem.path)
            yield ctx.report(
                obj,
                anchor if anchor is not None else ("data", *problem.path),
                f"{label}: "
                + (f"{where}: " if where else "")
                + problem.message
                + ("" if problem.severity == "warning" else " (the plugin fails to load this config)"),
                "Fix the config: version: v1, and under sharing.timeSlicing/mps.resources a name and an integer "
                "replicas >= 2 for each resource; flags.migStrategy none|single|mixed.",
                severity="warning" if problem.severity == "warning" else None,
            )


def _node_dp_labels(ctx: LintContext) -> dict[str, list[str]]:
    """Label value of ``nvidia.com/device-plugin.config`` -> node names (cluster and input Nodes)."""
    out: dict[str, list[str]] = {}
    for node in ctx.by_kind("Node", ""):
        value = node.labels.get(DP_CONFIG_LABEL)
        if value:
            out.setdefault(str(value), []).append(node.name)
    if ctx.cluster is not None:
        for cluster_node in ctx.cluster.nodes:
            value = cluster_node.metadata.labels.get(DP_CONFIG_LABEL)
            if value:
                out.setdefault(str(value), []).append(cluster_node.metadata.name)
    return out


@rule(
    id="device-plugin-config-unreferenced",
    severity="warning",
    category="sharing",
    summary="A sharing ConfigMap exists but the ClusterPolicy / device plugin does not use it (or a missing key).",
    context="optional",
)
def device_plugin_config_unreferenced(ctx: LintContext) -> Iterator[Finding]:
    configs = [
        (cm, parsed)
        for cm, parsed in _dp_configs(ctx)
        if any(cfg is not None and cfg.sharing_mode for cfg, _p in parsed.values())
    ]
    if not configs:
        return
    refs = _referenced_dp_configmaps(ctx)
    policies = ctx.by_kind("ClusterPolicy", "nvidia.com", include_cluster=True)
    deployed = bool(policies) or any(
        _template_is_device_plugin(ds.get("spec", "template"))
        for ds in ctx.by_kind("DaemonSet", "apps", include_cluster=True)
    )
    labels = _node_dp_labels(ctx) if ctx.cluster is not None else {}
    for cm, parsed in configs:
        keys = set(parsed)
        where = refs.get(cm.name)
        if not where:
            if deployed:
                yield ctx.report(
                    cm,
                    ("metadata", "name"),
                    f"ConfigMap {cm.name} holds a GPU sharing config ({', '.join(sorted(keys))}) but neither the "
                    "ClusterPolicy (spec.devicePlugin.config.name) nor a device-plugin DaemonSet points at it: "
                    "the plugin keeps advertising whole GPUs.",
                    f"Set spec.devicePlugin.config.name: {cm.name} and devicePlugin.config.default: <key> in the "
                    "ClusterPolicy (Helm: devicePlugin.config.name/default).",
                )
            continue
        if ctx.cluster is None:
            continue
        for value, nodes in sorted(labels.items()):
            if value not in keys:
                yield ctx.report(
                    cm,
                    ("data",),
                    f'Node(s) {", ".join(nodes[:3])} select device-plugin config "{value}" '
                    f"({DP_CONFIG_LABEL}) but ConfigMap {cm.name} has no such key ({', '.join(sorted(keys))}): "
                    "the plugin skips reconfiguration on them.",
                    f"Label the nodes with one of {', '.join(sorted(keys))} or add key {value} to the ConfigMap.",
                )
        has_default = "default" in keys or any(
            isinstance(cp.get("spec", "devicePlugin", "config", "default"), str)
            and cp.get("spec", "devicePlugin", "config", "default")
            for cp, _path in where
            if cp.kind == "ClusterPolicy"
        )
        if (
            not has_default
            and not (keys & set(labels))
            and any(cp.kind == "ClusterPolicy" for cp, _p in where)
        ):
            yield ctx.report(
                cm,
                ("metadata", "name"),
                f"ConfigMap {cm.name} is the device-plugin config, but no devicePlugin.config.default is set and no "
                f"node is labelled {DP_CONFIG_LABEL} with one of its keys: no node gets the sharing config.",
                f"Set devicePlugin.config.default to one of {', '.join(sorted(keys))} in the ClusterPolicy, or "
                f"label GPU nodes {DP_CONFIG_LABEL}=<key>.",
            )
