"""ClusterPolicy fields and the ConfigMaps it references."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.gpu.labels import MIG_CONFIG as MIG_CONFIG_LABEL
from gpuplane.lint.context import join_labels
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules.operator._shared import _policies
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

MIG_STRATEGIES = ("none", "single", "mixed")
# Value the operator seeds on MIG-capable nodes: MIG off, nothing for a manager to do.
MIG_DISABLED_CONFIG = "all-disabled"
MIG_PARTED_KEY = "config.yaml"


def _configmaps(ctx: LintContext) -> tuple[dict[str, list[Manifest]], bool]:
    """ConfigMaps of the input and cluster by name, and whether the cluster's ConfigMaps are known.

    ClusterPolicy is cluster-scoped and names ConfigMaps of the operator's namespace
    without a namespace, so lookups are by name.
    """
    by_name: dict[str, list[Manifest]] = {}
    for cm in ctx.by_kind("ConfigMap", "", include_cluster=True):
        by_name.setdefault(cm.name, []).append(cm)
    known = ctx.cluster is not None and bool(ctx.cluster.by_kind("ConfigMap", ""))
    return by_name, known


def _mig_config_requests(ctx: LintContext) -> list[str]:
    """Where nodes ask for a MIG layout: node labels (cluster or input Nodes, NodePool templates)."""
    wanted: list[str] = []

    def check(labels: Any, where: str) -> None:
        if isinstance(labels, dict):
            value = labels.get(MIG_CONFIG_LABEL)
            if value and value != MIG_DISABLED_CONFIG:
                wanted.append(f"{where} ({MIG_CONFIG_LABEL}={value})")

    for node in ctx.by_kind("Node", ""):
        check(node.labels, f"node {node.name}")
    for pool in ctx.by_kind("NodePool", "karpenter.sh"):
        check(pool.get("spec", "template", "metadata", "labels"), f"NodePool {pool.name}")
    if ctx.cluster is not None:
        for cluster_node in ctx.cluster.nodes:
            check(cluster_node.metadata.labels, f"node {cluster_node.metadata.name}")
    return wanted


@rule(
    id="clusterpolicy-invalid",
    severity="error",
    category="operator",
    summary="ClusterPolicy fields that cannot work (MIG strategy, MIG manager, device-plugin/MIG ConfigMaps).",
    context="optional",
)
def clusterpolicy_invalid(ctx: LintContext) -> Iterator[Finding]:
    policies = _policies(ctx)
    if not policies:
        return
    configmaps, cluster_known = _configmaps(ctx)
    mig_wanted: list[str] | None = None
    for cp in policies:
        spec = cp.data["spec"]
        strategy = cp.get("spec", "mig", "strategy")
        if strategy is not None and strategy not in MIG_STRATEGIES:
            yield ctx.report(
                cp,
                ("spec", "mig", "strategy"),
                f'ClusterPolicy {cp.name}: spec.mig.strategy: Unsupported value: "{strategy}": supported values: '
                '"none", "single", "mixed" (the API server rejects the object).',
                "Set spec.mig.strategy to none, single or mixed (lower case).",
            )
        mig_manager = spec.get("migManager")
        if isinstance(mig_manager, dict) and mig_manager.get("enabled") is False:
            if mig_wanted is None:
                mig_wanted = _mig_config_requests(ctx)
            if mig_wanted:
                shown = join_labels(mig_wanted)
                yield ctx.report(
                    cp,
                    ("spec", "migManager", "enabled"),
                    f"ClusterPolicy {cp.name} disables the MIG manager but {shown} ask(s) for a MIG layout: "
                    "nothing applies it, nvidia.com/mig.config.state never reaches success and MIG resources are "
                    "never advertised.",
                    "Set spec.migManager.enabled: true (or remove the nvidia.com/mig.config labels).",
                )
        yield from _check_configmap_ref(
            ctx,
            cp,
            ("spec", "devicePlugin", "config"),
            configmaps,
            cluster_known,
            default_key=True,
        )
        yield from _check_configmap_ref(
            ctx,
            cp,
            ("spec", "migManager", "config"),
            configmaps,
            cluster_known,
            default_key=False,
        )


def _check_configmap_ref(
    ctx: LintContext,
    cp: Manifest,
    base: tuple[str, ...],
    configmaps: dict[str, list[Manifest]],
    cluster_known: bool,
    *,
    default_key: bool,
) -> Iterator[Finding]:
    name = cp.get(*base, "name")
    if not isinstance(name, str) or not name:
        return
    what = "device-plugin" if default_key else "MIG manager"
    found = configmaps.get(name)
    if not found:
        if cluster_known:
            yield ctx.report(
                cp,
                (*base, "name"),
                f"ClusterPolicy {cp.name} points the {what} at ConfigMap {name}, which exists neither in the "
                "input nor in the cluster: the operand cannot load its config.",
                f"Create ConfigMap {name} in the GPU Operator's namespace or fix {'.'.join(base)}.name.",
            )
        return
    keys: set[str] = set()
    for cm in found:
        data = cm.data.get("data")
        if isinstance(data, dict):
            keys.update(str(k) for k in data)
    if default_key:
        default = cp.get(*base, "default")
        if isinstance(default, str) and default and default not in keys:
            yield ctx.report(
                cp,
                (*base, "default"),
                f'ClusterPolicy {cp.name}: devicePlugin.config.default is "{default}" but ConfigMap {name} has '
                f"no such key (keys: {', '.join(sorted(keys)) or 'none'}): the device plugin cannot load its "
                "default config.",
                f"Set devicePlugin.config.default to one of the ConfigMap's keys ({', '.join(sorted(keys)) or 'add one'}).",
            )
    elif MIG_PARTED_KEY not in keys:
        yield ctx.report(
            cp,
            (*base, "name"),
            f"ClusterPolicy {cp.name} points the MIG manager at ConfigMap {name}, which has no {MIG_PARTED_KEY} "
            "key: the MIG manager reads its mig-parted config from that key only.",
            f"Put the mig-parted config under data.{MIG_PARTED_KEY} of ConfigMap {name}.",
        )
