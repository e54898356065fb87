"""Autoscaling rules: Karpenter NodePools and node classes that launch GPU nodes.

Facts: reference/platform.md §3 (Karpenter v1 NodePool / EC2NodeClass fields,
defaults, disruption controls and GPU pitfalls), read from
aws/karpenter-provider-aws ``website/content/en/docs/concepts/{nodepools,disruption,
nodeclasses,scheduling}.md`` and the NodePool CRD in corpus/crds/karpenter.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint import kinds
from gpuplane.lint.context import join_labels
from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.finding import AppendItem, Finding, SetValue
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import as_str
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

KARPENTER_GROUP = "karpenter.sh"
AWS_NODECLASS_GROUP = "karpenter.k8s.aws"
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
NODEPOOL_LABEL = "karpenter.sh/nodepool"

# Requirement keys that select GPU instances when used with In / Exists / Gt / Gte
# (Karpenter AWS and Azure well-known labels, platform.md §3.1 and §3.5).
GPU_REQUIREMENT_KEYS = frozenset(
    {
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-gpu-manufacturer",
        "karpenter.k8s.aws/instance-gpu-count",
        "karpenter.k8s.aws/instance-gpu-memory",
        "karpenter.azure.com/sku-gpu-name",
        "karpenter.azure.com/sku-gpu-manufacturer",
        "karpenter.azure.com/sku-gpu-count",
    }
)
# EC2 instance categories / families / types with NVIDIA GPUs (g*, p*; AWS instance-types reference).
GPU_CATEGORIES = frozenset({"g", "p"})
_GPU_FAMILY = re.compile(r"^(g\d+[a-z]*|gr\d+[a-z]*|p\d+[a-z]*|p\d+-[a-z0-9]+)$")
_AZURE_GPU_SKU = re.compile(r"^standard_n[cdv]", re.IGNORECASE)
# Default data volume of the node classes (platform.md §3.2): AL2/AL2023 root /dev/xvda 20Gi,
# Bottlerocket data /dev/xvdb 20Gi. GPU images are 10-20 GB compressed (platform.md §2.7),
# roughly twice that unpacked, and image GC starts at 85% disk use: below MIN_GPU_DISK_GIB
# one or two such images fill the disk.
DEFAULT_DISK_GIB = 20
MIN_GPU_DISK_GIB = 50
SUGGESTED_DISK = "100Gi"


def _requirements(pool: Manifest) -> list[tuple[int, dict[str, Any]]]:
    reqs = pool.get("spec", "template", "spec", "requirements")
    return [(i, r) for i, r in enumerate(reqs) if isinstance(r, dict)] if isinstance(reqs, list) else []


def _values(req: dict[str, Any]) -> list[str]:
    vals = req.get("values")
    return [str(v) for v in vals] if isinstance(vals, list) else []


def _gpu_requirement(pool: Manifest) -> int | None:
    """Index of the requirement that lets the NodePool launch GPU instances, else None."""
    for i, req in _requirements(pool):
        key, op, vals = as_str(req.get("key")), as_str(req.get("operator")), _values(req)
        if key in GPU_REQUIREMENT_KEYS:
            if op in ("In", "Exists"):
                return i
            if (
                op in ("Gt", "Gte")
                and vals
                and vals[0].isdigit()
                and (int(vals[0]) >= 0 if op == "Gt" else int(vals[0]) >= 1)
            ):
                return i
            continue
        if op != "In":
            continue
        if key == "karpenter.k8s.aws/instance-category" and GPU_CATEGORIES & {v.lower() for v in vals}:
            return i
        if key == "karpenter.k8s.aws/instance-family" and any(_GPU_FAMILY.match(v.lower()) for v in vals):
            return i
        if key == "node.kubernetes.io/instance-type" and any(
            _GPU_FAMILY.match(v.lower().split(".", 1)[0]) or _AZURE_GPU_SKU.match(v) for v in vals
        ):
            return i
        if key in ("karpenter.azure.com/sku-family", "karpenter.azure.com/sku-name") and any(
            v.upper().startswith("N") or _AZURE_GPU_SKU.match(v) for v in vals
        ):
            return i
    return None


def _gpu_pools(ctx: LintContext) -> list[tuple[Manifest, int]]:
    out = []
    for pool in ctx.by_kind("NodePool", KARPENTER_GROUP):
        idx = _gpu_requirement(pool)
        if idx is not None:
            out.append((pool, idx))
    return out


def _gpu_taint_key(pool: Manifest) -> str:
    for _i, req in _requirements(pool):
        if req.get("key") in (
            "karpenter.k8s.aws/instance-gpu-manufacturer",
            "karpenter.azure.com/sku-gpu-manufacturer",
        ) and "amd" in [v.lower() for v in _values(req)]:
            return "amd.com/gpu"
    return "nvidia.com/gpu"


# ---------------------------------------------------------------------------------------------

UNTAINTED_DOCS = """
## What it catches

A Karpenter `NodePool` whose requirements let it launch GPU instances
(`instance-gpu-*` requirements, GPU instance categories `g`/`p`, GPU
families or instance types, Azure `sku-gpu-*` / N-series) but whose node
template carries no `NoSchedule` (or `NoExecute`) taint. `startupTaints` do
not count: something removes them once the node is ready.

## Why it hurts

Nothing keeps CPU-only pods off the expensive nodes. Once a GPU node exists,
kube-scheduler packs ordinary pods onto it; they take its CPU and memory so
GPU pods no longer fit (`Insufficient cpu` on a node with idle GPUs), and
Karpenter cannot consolidate the node because CPU pods keep it busy: you pay
GPU prices for web servers. Karpenter's own docs taint expensive hardware.

## How to fix

Add `nvidia.com/gpu:NoSchedule` to `spec.template.spec.taints`. Pods that
request `nvidia.com/gpu` tolerate it automatically where the
`ExtendedResourceToleration` admission plugin runs (GKE), otherwise add the
toleration to GPU pods; GPU Operator operands already tolerate it.

## Bad

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}
```

## Good

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}
      taints:
      - {key: nvidia.com/gpu, effect: NoSchedule}
```

## References

- Karpenter docs, NodePools (`taints`, `startupTaints`) and Scheduling
  ("Accelerators/GPU Resources": taint expensive nodes).
- aws/karpenter-provider-aws issue #2027 (GPU instances launched without GPU requirements).
- reference/platform.md §2.6, §3.1, §3.4.
"""


@rule(
    id="karpenter-gpu-nodepool-untainted",
    severity="warning",
    category="autoscaling",
    summary="Karpenter NodePool that can launch GPU instances has no NoSchedule taint.",
    docs=UNTAINTED_DOCS,
    fixable=True,
)
def karpenter_gpu_nodepool_untainted(ctx: LintContext) -> Iterator[Finding]:
    for pool, idx in _gpu_pools(ctx):
        taints = pool.get("spec", "template", "spec", "taints")
        if isinstance(taints, list) and any(
            isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute") for t in taints
        ):
            continue
        key = _gpu_taint_key(pool)
        yield ctx.report(
            pool,
            ("spec", "template", "spec", "requirements", idx),
            f"NodePool {pool.name} can launch GPU instances but its nodes carry no NoSchedule taint: CPU-only pods "
            "will be packed onto the GPU nodes, starving GPU pods of CPU/memory and keeping the nodes from "
            "consolidating.",
            f"Add the taint {{key: {key}, effect: NoSchedule}} to spec.template.spec.taints and a matching "
            "toleration to GPU pods (automatic where the ExtendedResourceToleration admission plugin runs).",
            patch=(AppendItem(("spec", "template", "spec", "taints"), {"key": key, "effect": "NoSchedule"}),),
        )


# ---------------------------------------------------------------------------------------------

CONSOLIDATION_DOCS = """
## What it catches

A GPU `NodePool` that consolidates underutilized nodes
(`consolidationPolicy: WhenEmptyOrUnderutilized`, the default, or `Balanced`;
`consolidateAfter` not `Never`) with no disruption budget that blocks
`Underutilized` disruptions (`nodes: "0"` without a schedule), while GPU
training pods in the input do not carry the `karpenter.sh/do-not-disrupt`
annotation. Training pods pinned to another NodePool (`karpenter.sh/nodepool`
node selector) are not counted.

## Why it hurts

Consolidation evicts pods from a node it considers underutilized (a
multi-node job often leaves nodes partly idle) to repack or replace it. For
distributed training losing one rank kills or stalls the whole job
(NCCL timeout, torchrun restart), so hours of GPU work since the last
checkpoint are lost, and the job may be disrupted again after every restart.

## How to fix

Annotate training pod templates with `karpenter.sh/do-not-disrupt: "true"`
(Karpenter then skips their nodes for consolidation and drift), use
`consolidationPolicy: WhenEmpty` on training pools, or add a budget
`{nodes: "0", reasons: [Underutilized]}`.

## Bad

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-train}
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
```

## Good

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-train}
spec:
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 1m
    budgets:
    - {nodes: "0", reasons: [Underutilized]}
```

## References

- Karpenter docs, Disruption (consolidation policies, budgets, `karpenter.sh/do-not-disrupt`).
- reference/platform.md §3.1, §3.3.
"""


def _blocks_underutilized(budgets: Any) -> bool:
    """A budget that always (no schedule) allows 0 nodes for Underutilized disruptions."""
    if not isinstance(budgets, list):
        return False
    for b in budgets:
        if not isinstance(b, dict) or b.get("schedule"):
            continue
        if str(b.get("nodes", "")).strip() not in ("0", "0%"):
            continue
        reasons = b.get("reasons")
        if not reasons or (isinstance(reasons, list) and "Underutilized" in reasons):
            return True
    return False


def _do_not_disrupt(template: Any) -> bool:
    meta = template.get("metadata") if isinstance(template, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    value = ann.get(DO_NOT_DISRUPT) if isinstance(ann, dict) else None
    return value is not None and str(value).lower() != "false"


def _pinned_pool(template: Any) -> str | None:
    spec = template.get("spec") if isinstance(template, dict) else None
    selector = spec.get("nodeSelector") if isinstance(spec, dict) else None
    value = selector.get(NODEPOOL_LABEL) if isinstance(selector, dict) else None
    return str(value) if value is not None else None


@rule(
    id="karpenter-consolidation-disrupts-training",
    severity="warning",
    category="autoscaling",
    summary="GPU NodePool consolidates underutilized nodes while training pods lack karpenter.sh/do-not-disrupt.",
    docs=CONSOLIDATION_DOCS,
)
def karpenter_consolidation_disrupts_training(ctx: LintContext) -> Iterator[Finding]:
    pools = _gpu_pools(ctx)
    if not pools:
        return
    unprotected: list[str] = []  # training workloads that can run on any pool
    pinned: dict[str, list[str]] = {}
    seen: set[int] = set()
    for ps in ctx.gpu_podsets():
        if id(ps.source) in seen or not kinds.is_training(ps) or _do_not_disrupt(ps.template):
            continue
        seen.add(id(ps.source))
        label = obj_label(ps.source)
        pool_name = _pinned_pool(ps.template)
        if pool_name is None:
            unprotected.append(label)
        else:
            pinned.setdefault(pool_name, []).append(label)
    for pool, _idx in pools:
        victims = unprotected + pinned.get(pool.name, [])
        if not victims:
            continue
        disruption = pool.get("spec", "disruption", default={})
        disruption = disruption if isinstance(disruption, dict) else {}
        policy = disruption.get("consolidationPolicy") or "WhenEmptyOrUnderutilized"
        if policy in ("WhenEmpty",) or str(disruption.get("consolidateAfter", "")) == "Never":
            continue
        if pool.get("spec", "replicas") is not None or _blocks_underutilized(disruption.get("budgets")):
            continue
        path: FieldPath = (
            ("spec", "disruption", "consolidationPolicy")
            if "consolidationPolicy" in disruption
            else (("spec", "disruption") if "disruption" in pool.data.get("spec", {}) else ("spec",))
        )
        shown = join_labels(victims)
        yield ctx.report(
            pool,
            path,
            f"GPU NodePool {pool.name} consolidates underutilized nodes ({policy}) with no budget blocking it, and "
            f"training pods of {shown} lack {DO_NOT_DISRUPT}: Karpenter can evict a rank mid-run and the whole "
            "job loses its progress since the last checkpoint.",
            f'Annotate the training pod templates with {DO_NOT_DISRUPT}: "true", or set '
            'consolidationPolicy: WhenEmpty / a budget {nodes: "0", reasons: [Underutilized]} on this NodePool.',
        )


# ---------------------------------------------------------------------------------------------

LIMIT_DOCS = """
## What it catches

A GPU `NodePool` with no GPU resource (`nvidia.com/gpu`, `amd.com/gpu`,
`aws.amazon.com/neuron` ...) in `spec.limits`.

## Why it hurts

Karpenter launches whatever pending pods ask for. A runaway job, a
misconfigured HPA, or a user submitting 64 8-GPU pods makes it buy up to the
account's quota of p5 instances at tens of dollars per hour each. CPU/memory
limits bound GPU spend only loosely (one 8xH100 node has 192 vCPU).

## How to fix

Set `spec.limits.nvidia.com/gpu` to the most GPUs this pool may hold. Limits
are checked eventually-consistently, so a fast burst can overshoot slightly.

## Bad

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  limits: {cpu: 1000}
```

## Good

```yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  limits: {cpu: 1000, nvidia.com/gpu: 32}
```

## References

- Karpenter docs, NodePools, "spec.limits".
- reference/platform.md §3.1.
"""


@rule(
    id="karpenter-gpu-limit-missing",
    severity="info",
    category="autoscaling",
    summary="GPU NodePool without a GPU limit: unbounded spend.",
    docs=LIMIT_DOCS,
)
def karpenter_gpu_limit_missing(ctx: LintContext) -> Iterator[Finding]:
    for pool, _idx in _gpu_pools(ctx):
        if pool.get("spec", "replicas") is not None:
            continue  # static NodePool: a fixed node count, limits are not the spend bound
        limits = pool.get("spec", "limits")
        if isinstance(limits, dict) and any(
            isinstance(r, str) and kinds.is_accelerator_resource(r) for r in limits
        ):
            continue
        path: FieldPath = ("spec", "limits") if isinstance(limits, dict) else ("spec",)
        key = _gpu_taint_key(pool)
        yield ctx.report(
            pool,
            path,
            f"GPU NodePool {pool.name} has no {key} limit: Karpenter will launch as many GPU instances as pending "
            "pods ask for, with no bound on spend.",
            f"Set spec.limits.{key} to the most GPUs this pool may hold (e.g. {key}: 32).",
        )


# ---------------------------------------------------------------------------------------------

ROOT_VOLUME_DOCS = """
## What it catches

An `EC2NodeClass` used by a GPU `NodePool` whose image disk is small: no
`blockDeviceMappings` (Karpenter's default is 20Gi: the AL2/AL2023 root
`/dev/xvda`, or Bottlerocket's data volume `/dev/xvdb`), or a mapping for that
device under 50Gi. Node classes with `instanceStorePolicy: RAID0` put images on
the instance's NVMe and are not reported.

## Why it hurts

CUDA / PyTorch / vLLM / Triton images are 10-20 GB compressed and about twice
that unpacked. On a 20Gi disk the first pull fails or the node hits disk
pressure:

```
Failed to pull image "vllm/vllm-openai:v0.6.3": ... no space left on device
The node was low on resource: ephemeral-storage.
```

and the kubelet's image garbage collection (starting at 85% disk use) keeps
deleting images the next pod needs.

## How to fix

Give the image disk room for the images plus model caches: 100Gi or more
(gp3). For AL2/AL2023 size `/dev/xvda`; for Bottlerocket size the data volume
`/dev/xvdb` (keep `/dev/xvda` for the OS).

## Bad

```yaml
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
```

## Good

```yaml
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
  blockDeviceMappings:
  - deviceName: /dev/xvda
    ebs: {volumeSize: 100Gi, volumeType: gp3, encrypted: true}
```

## References

- Karpenter docs, NodeClasses, `spec.blockDeviceMappings` (defaults per AMI
  family) and `spec.instanceStorePolicy`.
- reference/platform.md §3.2, §4.5, §2.7.
"""


def _ami_family(nodeclass: Manifest) -> str | None:
    terms = nodeclass.get("spec", "amiSelectorTerms")
    for term in terms if isinstance(terms, list) else ():
        alias = term.get("alias") if isinstance(term, dict) else None
        if isinstance(alias, str) and "@" in alias:
            return alias.split("@", 1)[0].lower()
    family = nodeclass.get("spec", "amiFamily")
    return str(family).lower() if family else None


def _gib(value: Any) -> float | None:
    """GiB of a volume size: Karpenter's ``volumeSize`` is a ``resource.Quantity`` (k8s.quantity)."""
    q = kinds.quantity_value(value)
    return None if q is None else float(q) / 2**30


@rule(
    id="gpu-node-root-volume-small",
    severity="warning",
    category="autoscaling",
    summary="GPU node class keeps a small default image disk: multi-GB GPU images fail to pull.",
    docs=ROOT_VOLUME_DOCS,
    fixable=True,
)
def gpu_node_root_volume_small(ctx: LintContext) -> Iterator[Finding]:
    classes = {nc.name: nc for nc in ctx.by_kind("EC2NodeClass", AWS_NODECLASS_GROUP)}
    if not classes:
        return
    used: dict[str, str] = {}
    for pool, _idx in _gpu_pools(ctx):
        ref = pool.get("spec", "template", "spec", "nodeClassRef", default={})
        if isinstance(ref, dict) and ref.get("kind", "EC2NodeClass") == "EC2NodeClass" and ref.get("name"):
            used.setdefault(str(ref["name"]), pool.name)
    for name, pool_name in used.items():
        nc = classes.get(name)
        if nc is None or nc.get("spec", "instanceStorePolicy") == "RAID0":
            continue
        family = _ami_family(nc)
        if family in ("al2", "al2023"):
            device = "/dev/xvda"
        elif family == "bottlerocket":
            device = "/dev/xvdb"
        else:
            continue  # Custom / Windows: no Karpenter default to judge
        mappings = nc.get("spec", "blockDeviceMappings")
        found: tuple[int, dict[str, Any]] | None = None
        for i, m in enumerate(mappings if isinstance(mappings, list) else ()):
            if isinstance(m, dict) and m.get("deviceName") == device:
                found = (i, m)
                break
        new_mapping = {
            "deviceName": device,
            "ebs": {"volumeSize": SUGGESTED_DISK, "volumeType": "gp3", "encrypted": True},
        }
        if found is not None:
            i, m = found
            ebs = m.get("ebs") if isinstance(m.get("ebs"), dict) else {}
            size = _gib(ebs.get("volumeSize")) if "volumeSize" in ebs else float(DEFAULT_DISK_GIB)
            if size is None or size >= MIN_GPU_DISK_GIB:
                continue
            path: FieldPath = (
                ("spec", "blockDeviceMappings", i, "ebs", "volumeSize")
                if "volumeSize" in ebs
                else ("spec", "blockDeviceMappings", i)
            )
            shown = f"{ebs.get('volumeSize')}" if "volumeSize" in ebs else f"{DEFAULT_DISK_GIB}Gi (default)"
            patch: tuple = (
                SetValue(("spec", "blockDeviceMappings", i, "ebs", "volumeSize"), SUGGESTED_DISK),
            )
        else:
            shown = f"{DEFAULT_DISK_GIB}Gi (Karpenter default)"
            if isinstance(mappings, list):
                path = ("spec", "blockDeviceMappings")
                patch = (AppendItem(("spec", "blockDeviceMappings"), new_mapping),)
            else:
                path = (
                    ("spec", "amiSelectorTerms")
                    if "amiSelectorTerms" in nc.data.get("spec", {})
                    else ("spec",)
                )
                ops = []
                if device == "/dev/xvdb":  # listing mappings replaces the defaults: keep the OS volume
                    ops.append(
                        AppendItem(
                            ("spec", "blockDeviceMappings"),
                            {
                                "deviceName": "/dev/xvda",
                                "ebs": {"volumeSize": "4Gi", "volumeType": "gp3", "encrypted": True},
                            },
                        )
                    )
                ops.append(AppendItem(("spec", "blockDeviceMappings"), new_mapping))
                patch = tuple(ops)
        yield ctx.report(
            nc,
            path,
            f"EC2NodeClass {name} (used by GPU NodePool {pool_name}, {family}) gives images only {shown} on "
            f'{device}: multi-GB CUDA/PyTorch/serving images fill it ("no space left on device", disk-pressure '
            "evictions).",
            f"Size {device} to {SUGGESTED_DISK} or more (gp3) in spec.blockDeviceMappings.",
            patch=patch,
        )
