"""Sharing rules: time-slicing, MPS, MIG and the NVIDIA device-plugin / mig-parted configs.

Facts: reference/nvidia-gpu-stack.md §1 (device-plugin config format, MIG
strategies and resource names, requests > 1 under sharing), §3.3 (MIG manager
labels) and §4 (MIG profiles per GPU). Config parsing and MIG geometry live in
:mod:`gpuplane.gpu` (device_plugin, mig, catalog); these rules only decide which
objects are such configs and where to report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.context import pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_dict, as_str, dict_items, where
from gpuplane.sources.loader import DEVICE_PLUGIN_CONFIG_KIND, MIG_PARTED_CONFIG_KIND, PSEUDO_API_VERSION
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.gpu.device_plugin import DevicePluginConfig
    from gpuplane.gpu.resources import GpuResource
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import ContainerRef, LintContext

DP_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
NVIDIA_GPU = "nvidia.com/gpu"
MIG_PARTED_KEY = "config.yaml"
# Pseudo-objects the loader makes of kindless config files (docs/lint.md "Config files").
PSEUDO_GROUP = PSEUDO_API_VERSION.split("/", 1)[0]
# A ConfigMap data value that looks like a device-plugin config (top-level keys of
# api/config/v1/config.go) or a mig-parted config.
_DP_HINT = re.compile(r"^(sharing|flags)\s*:", re.MULTILINE)
_MIG_HINT = re.compile(r"^mig-configs\s*:", re.MULTILINE)


def _ns(obj: Manifest) -> str:
    return obj.namespace or "default"


def _classify(name: str) -> GpuResource | None:
    from gpuplane.gpu.resources import classify

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
    ``devicePlugin.config.name`` and configMap volumes of device-plugin DaemonSets."""
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
    from gpuplane.gpu.device_plugin import configs_from_configmap

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
        out.append((cm, configs_from_configmap(data)))
    return out


# ---------------------------------------------------------------------------------------------

DP_INVALID_DOCS = """
## What it catches

An NVIDIA device-plugin config (a ConfigMap key holding a `version: v1`
config with `sharing:` / `flags:`, any ConfigMap the ClusterPolicy or a
device-plugin DaemonSet points at, or a config file itself: a kindless
`version` + `sharing`/`flags`/`resources` document, linted as the pseudo-kind
`DevicePluginConfig`) that the plugin rejects or misreads:
YAML errors inside the data key, a version other than `v1`, a sharing section
with no resources, `replicas` below 2, a resource without name or replicas,
an unknown MIG strategy or device-list strategy, time-slicing and MPS
together. Settings the plugin ignores with a warning (`rename`, `devices`,
top-level `resources`) are reported as warnings.

## Why it hurts

The plugin (or its config-manager sidecar) fails to start on every node that
selects that config, with the upstream error, e.g.

```
unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2
```

so the node advertises no GPUs at all (`Insufficient nvidia.com/gpu` for
every pod), or the sharing you configured silently does not happen.

## How to fix

Fix the config so it parses: `version: v1`; under
`sharing.timeSlicing.resources` (or `sharing.mps.resources`) a `name` and an
integer `replicas >= 2` for each resource; `flags.migStrategy` one of
`none|single|mixed`.

## Bad

```yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 1
```

## Good

```yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
```

## References

- NVIDIA/k8s-device-plugin `api/config/v1/config.go`, `replicas.go`, `sharing.go`, README
  "Shared Access to GPUs".
- reference/nvidia-gpu-stack.md §1.1.
"""


@rule(
    id="device-plugin-config-invalid",
    severity="error",
    category="sharing",
    summary="NVIDIA device-plugin config malformed (version, replicas < 2, unknown resource, MIG strategy, YAML).",
    docs=DP_INVALID_DOCS,
)
def device_plugin_config_invalid(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.device_plugin import parse_device_plugin_config

    sources: list[tuple[Manifest, str, FieldPath | None, list]] = [
        (cm, f"Device-plugin config {key} in {obj_label(cm)}", ("data", key), problems)
        for cm, parsed in _dp_configs(ctx)
        for key, (_cfg, problems) in parsed.items()
    ]
    for obj in ctx.by_kind(DEVICE_PLUGIN_CONFIG_KIND, PSEUDO_GROUP):
        # A config file (pseudo-object, data = the document): problems point at their own lines.
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


# ---------------------------------------------------------------------------------------------

DP_UNREFERENCED_DOCS = """
## What it catches

A ConfigMap holding a device-plugin *sharing* config (time-slicing or MPS)
that nothing uses, when the input or `--cluster` shows how the device plugin
is deployed (a GPU Operator ClusterPolicy or an NVIDIA device-plugin
DaemonSet):

- no ClusterPolicy `spec.devicePlugin.config.name` and no device-plugin
  DaemonSet volume names it;
- with `--cluster`: it is referenced, but no `devicePlugin.config.default`
  is set, there is no key named `default`, and no node carries a
  `nvidia.com/device-plugin.config` label naming one of its keys;
- with `--cluster`: nodes are labelled `nvidia.com/device-plugin.config` with a
  key the ConfigMap does not have.

## Why it hurts

Creating the ConfigMap changes nothing: the plugin keeps advertising whole
GPUs, pods asking for `nvidia.com/gpu.shared` stay Pending, and teams that
expect 4 pods per GPU get 1. The GPU Operator applies no sharing config to a
node until `devicePlugin.config.default` is set or the node is labelled; an
unknown label value only makes the plugin skip reconfiguration.

## How to fix

Point the operator at it (`devicePlugin.config.name: <configmap>` and
`devicePlugin.config.default: <key>` in the ClusterPolicy or Helm values), or
label nodes `nvidia.com/device-plugin.config=<key>` with an existing key.

## Bad

```yaml
apiVersion: v1
kind: ConfigMap
metadata: {name: time-slicing-config, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 4}]}}
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin: {enabled: true}
```

## Good

```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    enabled: true
    config: {name: time-slicing-config, default: any}
```

## References

- GPU Operator docs, "Time-Slicing GPUs in Kubernetes" (cloud-native-docs `gpu-operator/gpu-sharing.rst`).
- NVIDIA/k8s-device-plugin README, "Updating Per-Node Configuration With a Node Label".
- reference/nvidia-gpu-stack.md §1.3.
"""


def _node_dp_labels(ctx: LintContext) -> dict[str, list[str]]:
    """Label value of ``nvidia.com/device-plugin.config`` -> node names (cluster and input Nodes)."""
    out: dict[str, list[str]] = {}
    for node in ctx.by_kind("Node", ""):
        value = node.labels.get(DP_CONFIG_LABEL)
        if value:
            out.setdefault(str(value), []).append(node.name)
    if ctx.cluster is not None:
        for node in ctx.cluster.nodes:
            value = node.metadata.labels.get(DP_CONFIG_LABEL)
            if value:
                out.setdefault(str(value), []).append(node.metadata.name)
    return out


@rule(
    id="device-plugin-config-unreferenced",
    severity="warning",
    category="sharing",
    summary="A sharing ConfigMap exists but the ClusterPolicy / device plugin does not use it (or a missing key).",
    docs=DP_UNREFERENCED_DOCS,
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


# ---------------------------------------------------------------------------------------------

SHARED_GT1_DOCS = """
## What it catches

A container asking for more than one replica of a time-sliced or MPS-shared
GPU resource: a `*.shared` resource (`nvidia.com/gpu.shared`,
`nvidia.com/mig-1g.10gb.shared`), or, with `--cluster`, `nvidia.com/gpu` /
`nvidia.com/mig-*` where every node advertising it shares it
(`nvidia.com/<resource>.replicas` label above 1).

## Why it hurts

Replicas are time slices of the same GPUs, not more GPUs: two replicas give no
extra compute (time is shared equally among all processes) and may even land
on the same physical GPU. With `failRequestsGreaterThanOne: true` (NVIDIA's
recommendation, and the default for MPS) the kubelet rejects the pod at
admission:

```
UnexpectedAdmissionError: Allocate failed due to rpc error: code = Unknown desc = request for 'nvidia.com/gpu': 2 too large: maximum request size for shared resources is 1, which is unexpected
```

## How to fix

Request 1 replica per container; for more compute use whole GPUs (a node pool
without sharing) or a bigger MIG profile.

## Bad

```yaml
resources:
  limits: {nvidia.com/gpu.shared: 2}
```

## Good

```yaml
resources:
  limits: {nvidia.com/gpu.shared: 1}
```

## References

- NVIDIA/k8s-device-plugin README, "Shared Access to GPUs" (failRequestsGreaterThanOne);
  `internal/rm/rm.go` `ValidateRequest`.
- reference/nvidia-gpu-stack.md §1.4.
"""


def _shared_by_nodes(ctx: LintContext) -> set[str]:
    """Resources that every cluster node advertising them shares (``<resource>.replicas`` > 1)."""
    cluster = ctx.cluster
    if cluster is None:
        return set()
    verdict: dict[str, bool] = {}
    for node in cluster.nodes:
        labels = node.metadata.labels
        for name, qty in node.status.allocatable.items():
            if not name.startswith("nvidia.com/") or str(qty).strip() in ("0", ""):
                continue
            raw = str(labels.get(f"{name}.replicas", "1"))
            shared = raw.isdigit() and int(raw) > 1
            verdict[name] = verdict.get(name, True) and shared
    return {name for name, shared in verdict.items() if shared}


def _is_shared(name: str, node_shared: set[str]) -> bool:
    res = _classify(name)
    return (res is not None and res.kind == "shared") or name in node_shared


@rule(
    id="shared-gpu-request-gt1",
    severity="warning",
    category="sharing",
    summary="Pod asks for >1 of a time-sliced / MPS-shared GPU resource: no extra compute, may be rejected.",
    docs=SHARED_GT1_DOCS,
    context="optional",
)
def shared_gpu_request_gt1(ctx: LintContext) -> Iterator[Finding]:
    node_shared = _shared_by_nodes(ctx)
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, count, path in _container_requests(c):
                if count > 1 and _is_shared(name, node_shared):
                    yield ctx.report(
                        ps.source,
                        path,
                        f"{where(ps, c)} asks for {count} {name}, a time-sliced/MPS-shared resource: "
                        "replicas are slices of the same GPUs (no extra compute), and with "
                        'failRequestsGreaterThanOne (default for MPS) the kubelet rejects the pod: "maximum request '
                        'size for shared resources is 1".',
                        f"Request {name}: 1, or use whole GPUs / a larger MIG profile for more compute.",
                    )


TIMESLICING_TENANT_DOCS = """
## What it catches

Time-sliced GPU resources (`*.shared`, or with `--cluster` resources every
node shares) requested by workloads of two or more namespaces, taken as
different tenants. When the only sharing configs in the input use MPS the
rule stays silent (MPS enforces per-client memory and compute limits).

## Why it hurts

Time-slicing gives no isolation: all replicas of a GPU share its memory and
its fault domain. One tenant's memory-hungry job makes another's fail with
`CUDA error: out of memory`, an XID error or a crash in one process can reset
the GPU for everyone, and processes can see each other on `nvidia-smi`.

## How to fix

Give tenants isolated slices: MIG (hardware isolation of memory, cache and
compute) or MPS with per-client limits; or keep time-sliced pools per
namespace (node selectors / taints per tenant).

## Bad

```yaml
# namespace team-a and namespace team-b both request:
resources:
  limits: {nvidia.com/gpu.shared: 1}
```

## Good

```yaml
# team-a and team-b each get MIG slices:
resources:
  limits: {nvidia.com/mig-1g.10gb: 1}
```

## References

- NVIDIA/k8s-device-plugin README ("no memory or fault-isolation between replicas").
- GPU Operator docs, "Time-Slicing GPUs in Kubernetes".
- reference/nvidia-gpu-stack.md §1.4, §5.1.
"""


@rule(
    id="timeslicing-multi-tenant",
    severity="info",
    category="sharing",
    summary="Time-sliced GPUs shared by namespaces of different tenants: no memory or fault isolation.",
    docs=TIMESLICING_TENANT_DOCS,
    context="optional",
)
def timeslicing_multi_tenant(ctx: LintContext) -> Iterator[Finding]:
    modes = {
        cfg.sharing_mode
        for _cm, parsed in _dp_configs(ctx)
        for cfg, _p in parsed.values()
        if cfg is not None and cfg.sharing_mode
    }
    if modes == {"mps"}:
        return
    node_shared = _shared_by_nodes(ctx)
    users: dict[str, list[tuple[PodSet, str, FieldPath]]] = {}
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, _count, path in _container_requests(c):
                if _is_shared(name, node_shared):
                    users.setdefault(name, []).append((ps, c.name, path))
                    break
    for name, uses in users.items():
        namespaces = sorted({_ns(ps.source) for ps, _c, _p in uses})
        if len(namespaces) < 2:
            continue
        for ps, cname, path in uses:
            others = [n for n in namespaces if n != _ns(ps.source)]
            yield ctx.report(
                ps.source,
                path,
                f'{obj_label(ps.source)}, container "{cname}" uses time-sliced {name}, which '
                f"namespace(s) {', '.join(others[:3])} also use: time-slicing has no memory or fault isolation "
                "between tenants.",
                "Give each tenant isolated slices (MIG profiles, or MPS with memory limits), or separate "
                "time-sliced node pools per namespace.",
            )


# ---------------------------------------------------------------------------------------------

MIG_UNKNOWN_DOCS = """
## What it catches

A `nvidia.com/mig-<profile>` request whose profile no GPU model offers
(e.g. `mig-2g.7gb`, or `mig-1g.5gb` on an 80GB-only fleet is still known:
A100-40GB offers it). With `--cluster`, also a profile no node advertises
(unless nodes run the `single` strategy, see mig-strategy-mismatch).

## Why it hurts

No device plugin ever advertises the resource, so the pod is Pending forever:

```
0/6 nodes are available: 6 Insufficient nvidia.com/mig-2g.7gb.
```

Cluster Autoscaler / Karpenter cannot help either: no node type has it.

## How to fix

Use a profile of your GPU model: A100-40GB `1g.5gb`, `2g.10gb`, `3g.20gb`,
`4g.20gb`, `7g.40gb`; A100-80GB / H100-80GB `1g.10gb`, `1g.20gb`, `2g.20gb`,
`3g.40gb`, `4g.40gb`, `7g.80gb`; H200 `1g.18gb`, `2g.35gb`, `3g.71gb` ...
(`gpuplane advise mig --gpu MODEL` lists them). `+me` profiles are written
`.me` in the resource name (`nvidia.com/mig-1g.10gb.me`).

## Bad

```yaml
resources:
  limits: {nvidia.com/mig-2g.7gb: 1}
```

## Good

```yaml
resources:
  limits: {nvidia.com/mig-2g.10gb: 1}
```

## References

- NVIDIA MIG User Guide, "Supported MIG Profiles".
- NVIDIA/k8s-device-plugin README (mixed strategy resource names).
- reference/nvidia-gpu-stack.md §1.2, §4.3.
"""


def _known_profiles() -> dict[str, list[str]]:
    """MIG profile name -> models that offer it (from the hardware catalog)."""
    from gpuplane.gpu.catalog import catalog

    out: dict[str, list[str]] = {}
    for model in catalog().models.values():
        for p in model.mig_profiles:
            out.setdefault(p.name, []).append(model.name)
    return out


def _advertised(ctx: LintContext) -> set[str]:
    names: set[str] = set()
    if ctx.cluster is not None:
        for node in ctx.cluster.nodes:
            for name, qty in node.status.allocatable.items():
                if str(qty).strip() not in ("0", ""):
                    names.add(name)
    return names


def _single_strategy_nodes(ctx: LintContext) -> list[str]:
    if ctx.cluster is None:
        return []
    return [
        n.metadata.name for n in ctx.cluster.nodes if n.metadata.labels.get(MIG_STRATEGY_LABEL) == "single"
    ]


@rule(
    id="mig-profile-unknown",
    severity="error",
    category="sharing",
    summary="nvidia.com/mig-<profile> request that no GPU model offers (ctx: that no node advertises).",
    docs=MIG_UNKNOWN_DOCS,
    context="optional",
)
def mig_profile_unknown(ctx: LintContext) -> Iterator[Finding]:
    known: dict[str, list[str]] | None = None
    advertised: set[str] | None = None
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, _count, path in _container_requests(c):
                res = _classify(name)
                if res is None or not res.mig_profile:
                    continue
                if known is None:
                    known = _known_profiles()
                profile = res.mig_profile
                if profile not in known:
                    yield ctx.report(
                        ps.source,
                        path,
                        f"{where(ps, c)} asks for {name}: no GPU model offers the MIG profile "
                        f"{profile}, so no node ever advertises it and the pod stays Pending "
                        f"(Insufficient {name}).",
                        "Use a MIG profile of your GPU model (e.g. 1g.10gb, 2g.20gb, 3g.40gb on A100-80GB/H100; "
                        "1g.5gb, 2g.10gb, 3g.20gb on A100-40GB); see gpuplane advise mig.",
                    )
                    continue
                if ctx.cluster is None or not ctx.cluster.nodes:
                    continue
                if advertised is None:
                    advertised = _advertised(ctx)
                if name in advertised or _single_strategy_nodes(ctx):
                    continue
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {name} (offered by {', '.join(known[profile][:3])}), "
                    "but no node of the cluster advertises it: the pod stays Pending "
                    f"(Insufficient {name}).",
                    "Request a MIG profile the nodes are partitioned into, or repartition GPUs with "
                    f"{MIG_CONFIG_LABEL} (mixed strategy) to offer {profile}.",
                )


MIG_STRATEGY_DOCS = """
## What it catches

With `--cluster`, a request that the MIG strategy of the candidate nodes
(those matching the pod's `nodeSelector`) can never satisfy:

- `nvidia.com/mig-<profile>` while those nodes run the `single` strategy
  (`nvidia.com/mig.strategy=single`) and none advertises the MIG resource:
  under `single`, MIG slices are advertised as `nvidia.com/gpu`;
- `nvidia.com/gpu` while every candidate GPU node runs the `mixed` strategy
  with all GPUs MIG-enabled (no `nvidia.com/gpu` in allocatable, only
  `nvidia.com/mig-*`).

## Why it hurts

The pod is Pending forever with `Insufficient nvidia.com/mig-1g.10gb` (or
`Insufficient nvidia.com/gpu`) although the nodes have free MIG slices.

## How to fix

Match the request to the strategy: under `single` request `nvidia.com/gpu`
(each one is a slice of the node's single profile, pin the product with
`nvidia.com/gpu.product`); under `mixed` request `nvidia.com/mig-<profile>`;
or change the strategy (ClusterPolicy `mig.strategy`, device-plugin
`migStrategy`).

## Bad

```yaml
# nodes: nvidia.com/mig.strategy=single, allocatable nvidia.com/gpu: 7
resources:
  limits: {nvidia.com/mig-1g.10gb: 1}
```

## Good

```yaml
nodeSelector: {nvidia.com/gpu.product: A100-SXM4-80GB-MIG-1g.10gb}
resources:
  limits: {nvidia.com/gpu: 1}
```

## References

- NVIDIA/k8s-device-plugin README, "Configuration Option Details" (MIG strategies);
  `internal/rm/device_map.go`.
- reference/nvidia-gpu-stack.md §1.2.
"""


def _candidate_nodes(ctx: LintContext, ps: PodSet) -> list[Any]:
    selector = pod_spec(ps).get("nodeSelector")
    nodes = ctx.cluster.nodes if ctx.cluster is not None else []
    if not isinstance(selector, dict) or not selector:
        return list(nodes)
    return [n for n in nodes if all(n.metadata.labels.get(k) == str(v) for k, v in selector.items())]


def _allocatable_count(node: Any, name: str) -> int:
    raw = node.status.allocatable.get(name)
    text = str(raw).strip() if raw is not None else "0"
    return int(text) if text.isdigit() else 0


@rule(
    id="mig-strategy-mismatch",
    severity="error",
    category="sharing",
    summary="MIG request that the nodes' MIG strategy (single / mixed) never advertises.",
    docs=MIG_STRATEGY_DOCS,
    context="required",
)
def mig_strategy_mismatch(ctx: LintContext) -> Iterator[Finding]:
    if ctx.cluster is None or not ctx.cluster.nodes:
        return
    for ps in ctx.gpu_podsets():
        requests = [(c, name, path) for c in ctx.containers(ps) for name, _n, path in _container_requests(c)]
        if not requests:
            continue
        candidates = _candidate_nodes(ctx, ps)
        mig_nodes = [n for n in candidates if n.metadata.labels.get(MIG_STRATEGY_LABEL)]
        if not mig_nodes:
            continue
        for c, name, path in requests:
            res = _classify(name)
            if res is None or res.vendor != "nvidia":
                continue
            if res.kind == "mig":
                if any(_allocatable_count(n, name) for n in candidates):
                    continue
                single = [
                    n.metadata.name
                    for n in mig_nodes
                    if n.metadata.labels.get(MIG_STRATEGY_LABEL) == "single"
                ]
                if not single:
                    continue
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {name}, but its candidate nodes "
                    f"({', '.join(single[:3])}) run the MIG single strategy, which advertises MIG slices as "
                    f"{NVIDIA_GPU}: {name} never appears and the pod stays Pending.",
                    f"Request {NVIDIA_GPU} (pin the slice type with nodeSelector {GPU_PRODUCT_LABEL}), or switch "
                    "those nodes to the mixed strategy.",
                )
            elif name == NVIDIA_GPU:
                gpu_nodes = [
                    n
                    for n in candidates
                    if n.metadata.labels.get(MIG_STRATEGY_LABEL)
                    or any(k.startswith("nvidia.com/") for k in n.status.allocatable)
                ]
                if not gpu_nodes or any(_allocatable_count(n, NVIDIA_GPU) for n in gpu_nodes):
                    continue
                if not all(n.metadata.labels.get(MIG_STRATEGY_LABEL) == "mixed" for n in gpu_nodes):
                    continue
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {NVIDIA_GPU}, but every candidate GPU node runs the "
                    "MIG mixed strategy with all GPUs MIG-enabled: they advertise only nvidia.com/mig-* "
                    "resources, so the pod stays Pending (Insufficient nvidia.com/gpu).",
                    "Request a MIG profile resource (nvidia.com/mig-<profile>) or keep some GPUs with MIG disabled "
                    f"({MIG_CONFIG_LABEL}=all-disabled) for whole-GPU pods.",
                )


# ---------------------------------------------------------------------------------------------

MIG_CONFIG_DOCS = """
## What it catches

A mig-parted config (ConfigMap key holding `version: v1` + `mig-configs:`, or
a kindless config file with `version` + `mig-configs`, linted as the pseudo-kind
`MigPartedConfig`) that cannot be applied: YAML/format errors, unknown profile names, counts
above a profile's maximum, or combinations that do not fit one GPU (too many
slices, overlapping placements), checked against the GPU named by the entry's
`device-filter`, or against every GPU model offering those profiles when there
is no filter (profiles no catalog GPU offers are left alone there: the entry may
target a GPU newer than the catalog). Also `nvidia.com/mig.config` label values (input Nodes, Karpenter
NodePool templates, `--cluster` nodes) that name no entry of the mig-parted
configs in the input, or whose entry does not fit the node's GPU model.

## Why it hurts

The MIG manager sets `nvidia.com/mig.config.state=failed` and leaves the GPU
unpartitioned (or half-partitioned), logging e.g.

```
Error applying MIG configuration with hooks: error setting MIGConfig: error attempting multiple config orderings: all orderings failed
```

and every pod waiting for those MIG resources stays Pending.

## How to fix

Use only profiles of the target GPU with at most 7 compute slices and 8 memory
slices in valid placements (A100/H100: e.g. `3g.40gb: 2`, or
`1g.10gb: 2, 2g.20gb: 1, 3g.40gb: 1`); `gpuplane advise mig --gpu MODEL`
prints valid layouts.

## Bad

```yaml
version: v1
mig-configs:
  custom:
  - devices: all
    mig-enabled: true
    mig-devices: {"3g.40gb": 2, "1g.10gb": 2}
```

## Good

```yaml
version: v1
mig-configs:
  custom:
  - devices: all
    mig-enabled: true
    mig-devices: {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
```

## References

- NVIDIA/mig-parted `api/spec/v1` (config format) and `pkg/mig/config`.
- NVIDIA MIG User Guide, "Supported MIG Profiles" (placements).
- reference/nvidia-gpu-stack.md §3.3, §4.2, §4.3.
"""


def _fits_some_model(profiles: dict[str, int]) -> tuple[bool, str]:
    """Does the layout fit one GPU of at least one catalog model offering all its profiles?"""
    from gpuplane.gpu.catalog import catalog
    from gpuplane.gpu.mig import layout_fits

    wanted = [p for p, n in profiles.items() if n]
    reason = ""
    offered = False
    for model in catalog().models.values():
        if not model.mig_capable or any(model.profile(p) is None for p in wanted):
            continue
        offered = True
        ok, why = layout_fits(model, profiles)
        if ok:
            return True, ""
        reason = reason or why
    if not offered:
        # Profiles of a GPU the catalog does not know (NVIDIA ships entries for new GPUs
        # first): not proven wrong, so not reported.
        return True, ""
    return False, reason


def _mig_parted_configs(
    ctx: LintContext,
) -> list[tuple[Manifest, str, FieldPath | None, str | dict[str, Any]]]:
    """Every mig-parted config of the input: ``(object, label, anchor, text or document)``.

    ConfigMap keys are YAML text, so their findings sit on the key (``anchor``); a
    config file (``MigPartedConfig`` pseudo-object, ``data`` = the document) has no
    anchor: findings point at the field itself (``("data", *path)``).
    """
    out: list[tuple[Manifest, str, FieldPath | None, str | dict[str, Any]]] = []
    for cm in ctx.by_kind("ConfigMap", ""):
        for key, value in _configmap_data(cm).items():
            if isinstance(value, str) and _MIG_HINT.search(value):
                out.append((cm, f"mig-parted config {key} of {obj_label(cm)}", ("data", str(key)), value))
    for obj in ctx.by_kind(MIG_PARTED_CONFIG_KIND, PSEUDO_GROUP):
        document = obj.data.get("data")
        out.append(
            (obj, f"mig-parted config file {obj.name}", None, document if isinstance(document, dict) else {})
        )
    return out


@rule(
    id="mig-config-invalid",
    severity="error",
    category="sharing",
    summary="mig-parted config or nvidia.com/mig.config label that does not fit the GPU.",
    docs=MIG_CONFIG_DOCS,
    context="optional",
)
def mig_config_invalid(ctx: LintContext) -> Iterator[Finding]:
    from gpuplane.gpu.catalog import catalog
    from gpuplane.gpu.mig import layout_fits, parse_mig_parted_config

    cat = catalog()
    all_entries: dict[str, list[Any]] = {}
    for cm, label, anchor, content in _mig_parted_configs(ctx):
        configs, problems = parse_mig_parted_config(content)
        for problem in problems:
            where = ".".join(str(p) for p in problem.path)
            yield ctx.report(
                cm,
                anchor if anchor is not None else ("data", *problem.path),
                f"{label}: " + (f"{where}: " if where else "") + problem.message,
                "Fix the mig-parted config (version: v1, mig-configs: name -> [{devices, mig-enabled, mig-devices}]).",
                severity="warning" if problem.severity == "warning" else None,
            )
        for name, entries in configs.items():
            all_entries[name] = entries
            for i, entry in enumerate(entries):
                if not entry.mig_enabled or not entry.mig_devices:
                    continue
                models = [cat.model_for_pci_id(pci) for pci in entry.device_filter]
                models = [m for m in models if m is not None]
                if models:
                    for model in models:
                        ok, reason = layout_fits(model, entry.mig_devices)
                        if not ok:
                            yield ctx.report(
                                cm,
                                anchor if anchor is not None else ("data", "mig-configs", name, i),
                                f"{label}: mig-configs.{name}[{i}] does not fit "
                                f"{model.name}: {reason}; the MIG manager fails (mig.config.state=failed).",
                                f"Choose profiles and counts that fit {model.name} (see gpuplane advise mig).",
                            )
                    continue
                if entry.device_filter:
                    continue  # filter names GPUs the catalog does not know
                ok, reason = _fits_some_model(entry.mig_devices)
                if not ok:
                    yield ctx.report(
                        cm,
                        anchor if anchor is not None else ("data", "mig-configs", name, i),
                        f"{label}: mig-configs.{name}[{i}] fits no GPU: "
                        f"{reason}; the MIG manager fails (mig.config.state=failed).",
                        "Choose profiles and counts that fit the target GPU (see gpuplane advise mig).",
                    )
    yield from _check_mig_labels(ctx, all_entries)


def _check_mig_labels(ctx: LintContext, entries: dict[str, list[Any]]) -> Iterator[Finding]:
    """``nvidia.com/mig.config`` values on input Nodes / NodePool templates (and cluster nodes)."""
    from gpuplane.gpu.catalog import catalog
    from gpuplane.gpu.mig import layout_fits

    if not entries:
        return
    cat = catalog()
    targets: list[tuple[Manifest | None, FieldPath, dict[str, Any], str]] = []
    for node in ctx.by_kind("Node", ""):
        targets.append((node, ("metadata", "labels", MIG_CONFIG_LABEL), node.labels, f"Node {node.name}"))
    for pool in ctx.by_kind("NodePool", "karpenter.sh"):
        labels = pool.get("spec", "template", "metadata", "labels", default={})
        if isinstance(labels, dict):
            targets.append(
                (
                    pool,
                    ("spec", "template", "metadata", "labels", MIG_CONFIG_LABEL),
                    labels,
                    f"NodePool {pool.name}",
                )
            )
    if ctx.cluster is not None:
        for n in ctx.cluster.nodes:
            targets.append((None, (), n.metadata.labels, f"node {n.metadata.name}"))
    cm_anchor = _mig_parted_configs(ctx)
    for obj, path, labels, what in targets:
        value = labels.get(MIG_CONFIG_LABEL)
        if not value or value == "all-disabled":
            continue
        value = str(value)
        problem = None
        if value not in entries:
            problem = f'{what} asks for MIG config "{value}", which the mig-parted config does not define'
            fix = f'Use one of {", ".join(sorted(entries)[:6])} or add a "{value}" entry to the mig-parted config.'
        else:
            model = cat.model_for_node_labels({k: str(v) for k, v in labels.items()})
            if model is None:
                continue
            for entry in entries[value]:
                if entry.device_filter and not any(
                    cat.model_for_pci_id(p) is model for p in entry.device_filter
                ):
                    continue
                if entry.mig_enabled and entry.mig_devices:
                    ok, reason = layout_fits(model, entry.mig_devices)
                    if not ok:
                        problem = (
                            f'{what} ({model.name}) asks for MIG config "{value}" that does not fit: {reason}'
                        )
                        fix = f"Pick a MIG config whose profiles fit {model.name}."
                        break
        if problem is None:
            continue
        if obj is not None:
            yield ctx.report(obj, path, problem + "; the MIG manager fails (mig.config.state=failed).", fix)
        elif cm_anchor:
            cm, _label, anchor, _content = cm_anchor[0]
            yield ctx.report(
                cm,
                anchor or ("data", "mig-configs"),
                problem + "; the MIG manager fails (mig.config.state=failed).",
                fix,
            )


# ---------------------------------------------------------------------------------------------

MIG_MULTI_DOCS = """
## What it catches

One container asking for more than one MIG device in total (e.g.
`nvidia.com/mig-1g.10gb: 2`, or one `mig-1g.10gb` plus one `mig-2g.20gb`).

## Why it hurts

A CUDA process can use only one MIG instance: CUDA enumerates just the first
MIG device visible to it, so the extra slices are reserved and idle.
Frameworks do not combine MIG slices into a bigger GPU (no NCCL/P2P across
MIG instances).

## How to fix

Request one larger profile (`mig-3g.40gb: 1` instead of `mig-1g.10gb: 3`),
or split the work over several containers/pods, one slice each.

## Bad

```yaml
resources:
  limits: {nvidia.com/mig-1g.10gb: 2}
```

## Good

```yaml
resources:
  limits: {nvidia.com/mig-2g.20gb: 1}
```

## References

- NVIDIA MIG User Guide, "CUDA Device Enumeration" (one MIG instance per CUDA process).
- NVIDIA/k8s-device-plugin README (mixed strategy).
"""


@rule(
    id="mig-multiple-devices-per-container",
    severity="warning",
    category="sharing",
    summary="One container asks for >1 MIG device: a CUDA process uses only one MIG instance.",
    docs=MIG_MULTI_DOCS,
)
def mig_multiple_devices_per_container(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            mig = [
                (name, count, path)
                for name, count, path in _container_requests(c)
                if (res := _classify(name)) is not None and res.mig_profile
            ]
            total = sum(count for _n, count, _p in mig)
            if total < 2:
                continue
            _name, _count, path = mig[0]
            shown = ", ".join(f"{n}: {k}" for n, k, _p in mig)
            yield ctx.report(
                ps.source,
                path,
                f"{where(ps, c)} asks for {total} MIG devices ({shown}): a CUDA process uses only "
                "one MIG instance, so the others stay reserved and idle.",
                "Request one larger MIG profile (e.g. nvidia.com/mig-3g.40gb: 1), or split the work into one slice "
                "per container.",
            )
