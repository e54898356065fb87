"""Operator rules: the NVIDIA GPU Operator's ClusterPolicy.

Facts: reference/nvidia-gpu-stack.md §3 (ClusterPolicy fields, Helm values,
node labels of the MIG manager) read from NVIDIA/gpu-operator
``api/nvidia/v1/clusterpolicy_types.go`` and ``deployments/gpu-operator/values.yaml``;
the ``mig.strategy`` enum is in the ClusterPolicy CRD (corpus/crds/gpu-operator).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.context import join_labels
from gpuplane.lint.finding import Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.sources.manifest import Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

GROUP = "nvidia.com"
MIG_STRATEGIES = ("none", "single", "mixed")
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
# Value the operator seeds on MIG-capable nodes: MIG off, nothing for a manager to do.
MIG_DISABLED_CONFIG = "all-disabled"
MIG_PARTED_KEY = "config.yaml"


def _policies(ctx: LintContext) -> list[Manifest]:
    return [p for p in ctx.by_kind("ClusterPolicy", GROUP) if isinstance(p.data.get("spec"), dict)]


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
        for node in ctx.cluster.nodes:
            check(node.metadata.labels, f"node {node.metadata.name}")
    return wanted


CLUSTERPOLICY_DOCS = """
## What it catches

ClusterPolicy settings that cannot work:

- `spec.mig.strategy` other than `none`, `single`, `mixed` (the CRD's enum);
- `spec.migManager.enabled: false` while nodes ask for a MIG layout through
  the `nvidia.com/mig.config` label (input Nodes, Karpenter NodePool templates,
  or `--cluster` nodes);
- `spec.devicePlugin.config.name` naming a ConfigMap that does not exist, or
  `spec.devicePlugin.config.default` naming a key that ConfigMap lacks;
- `spec.migManager.config.name` naming a missing ConfigMap or one without the
  `config.yaml` key.

A ConfigMap counts as missing only when it is neither in the input nor in the
`--cluster` snapshot and that snapshot lists ConfigMaps; otherwise the rule
cannot know and stays silent.

## Why it hurts

An unknown strategy is rejected by the API server:

```
ClusterPolicy.nvidia.com "cluster-policy" is invalid: spec.mig.strategy: Unsupported value: "Mixed": supported values: "none", "single", "mixed"
```

Without the MIG manager nobody applies `nvidia.com/mig.config`: the label's
`nvidia.com/mig.config.state` never reaches `success` and MIG resources never
appear, so MIG pods stay Pending (`Insufficient nvidia.com/mig-1g.10gb`).
A missing device-plugin ConfigMap or key leaves the plugin without its
time-slicing/MPS config (its config-manager sidecar fails to start or falls
back), so shared resources are never advertised.

## How to fix

Use a valid strategy, enable the MIG manager on clusters that use MIG, and
point `devicePlugin.config` / `migManager.config` at ConfigMaps (and keys)
that exist in the operator's namespace.

## Bad

```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  mig: {strategy: Mixed}
  devicePlugin:
    config: {name: time-slicing-config, default: any}
```

## Good

```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  mig: {strategy: mixed}
  migManager: {enabled: true}
  devicePlugin:
    config: {name: time-slicing-config, default: tesla-t4}
```

## References

- NVIDIA/gpu-operator `api/nvidia/v1/clusterpolicy_types.go` (`MIGStrategy`),
  ClusterPolicy CRD enum, `deployments/gpu-operator/values.yaml`.
- GPU Operator docs, "Time-Slicing GPUs in Kubernetes" and "GPU Operator with MIG".
- reference/nvidia-gpu-stack.md §1.3, §3.1-§3.3.
"""


@rule(
    id="clusterpolicy-invalid",
    severity="error",
    category="operator",
    summary="ClusterPolicy fields that cannot work (MIG strategy, MIG manager, device-plugin/MIG ConfigMaps).",
    docs=CLUSTERPOLICY_DOCS,
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


DCGM_DOCS = """
## What it catches

A ClusterPolicy with `spec.dcgmExporter.enabled: false`.

## Why it hurts

The DCGM exporter is the source of GPU metrics (`DCGM_FI_DEV_GPU_UTIL`,
`DCGM_FI_DEV_FB_USED`, power, temperature, XID errors). Without it there is
nothing to autoscale on, no idle-GPU detection, no alert on failing GPUs
(XID errors) and no evidence for capacity planning; Cluster Autoscaler and
dashboards only see requested GPUs, not used ones.

## How to fix

Enable it (`dcgmExporter.enabled: true`, with `serviceMonitor.enabled: true`
when Prometheus Operator runs), unless another DCGM-based exporter is
deployed on the GPU nodes.

## Bad

```yaml
spec:
  dcgmExporter: {enabled: false}
```

## Good

```yaml
spec:
  dcgmExporter:
    enabled: true
    serviceMonitor: {enabled: true}
```

## References

- NVIDIA/gpu-operator `deployments/gpu-operator/values.yaml` (`dcgmExporter`).
- NVIDIA/dcgm-exporter `etc/default-counters.csv`.
- reference/platform.md §5.2; reference/nvidia-gpu-stack.md §3.2.
"""


@rule(
    id="dcgm-exporter-disabled",
    severity="info",
    category="operator",
    summary="GPU Operator without the DCGM exporter: no GPU metrics for autoscaling or idle detection.",
    docs=DCGM_DOCS,
    fixable=True,
)
def dcgm_exporter_disabled(ctx: LintContext) -> Iterator[Finding]:
    for cp in _policies(ctx):
        if cp.get("spec", "dcgmExporter", "enabled") is False:
            yield ctx.report(
                cp,
                ("spec", "dcgmExporter", "enabled"),
                f"ClusterPolicy {cp.name} disables the DCGM exporter: no GPU utilisation, memory, power or XID "
                "metrics for autoscaling, idle-GPU detection or alerts.",
                "Set spec.dcgmExporter.enabled: true (and serviceMonitor.enabled: true with Prometheus Operator).",
                patch=(SetValue(("spec", "dcgmExporter", "enabled"), True),),
            )
