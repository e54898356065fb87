"""Rules of category ``placement``: getting GPU pods onto the right nodes (spec/rules.md).

Taint/toleration and node-affinity semantics follow k8s.io/api ``core/v1/toleration.go``
(``ToleratesTaint``) and k8s.io/component-helpers ``scheduling/corev1/nodeaffinity``;
the ExtendedResourceToleration admission plugin is
``plugin/pkg/admission/extendedresourcetoleration/admission.go`` (reference/scheduling.md §3.5).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from gpuplane.k8s.objects import Toleration
from gpuplane.k8s.selectors import node_selector_term_matches_labels, pod_matches_required_node_affinity
from gpuplane.k8s.tolerations import NO_SCHEDULE, tolerations_tolerate_taint
from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.registry import rule
from gpuplane.lint.rules._common import (
    GPU_LABELS,
    TYPE_PINNING_LABELS,
    ZONE_LABELS,
    as_dict,
    as_str,
    node_selector,
    obj_label,
    preferred_terms,
    required_terms,
    term_expressions,
    tolerations,
    where,
)

# Taints the node lifecycle controller and cloud providers manage: transient, not a pool design.
_LIFECYCLE_PREFIXES = (
    "node.kubernetes.io/",
    "node.cloudprovider.kubernetes.io/",
    "node-role.kubernetes.io/",
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "karpenter.sh/disrupted",
    "karpenter.sh/disruption",
)
GPU_TAINT_KEYS = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")

TAINT_DOCS = """
## What it catches
A GPU pod without a toleration for the taint its GPU nodes carry. With `--cluster`: the actual
`NoSchedule`/`NoExecute` taints of every node that advertises the pod's GPU resource (error when *every*
such node repels it). Without a cluster: only the conventional `nvidia.com/gpu:NoSchedule` taint, as an
info-level hint.

A taint keyed by a resource the pod requests (`nvidia.com/gpu`) is tolerated automatically where the
`ExtendedResourceToleration` admission plugin runs: it adds `{key: <resource>, operator: Exists,
effect: NoSchedule}` to every pod requesting that extended resource. GKE enables it; most other
distributions (AKS, kubeadm, EKS) do not. The rule stays silent for such taints when the cluster shows
the plugin at work (GKE nodes, or running pods that carry those auto-added tolerations).

## Why it hurts
The pod stays Pending: `0/8 nodes are available: 4 Insufficient nvidia.com/gpu, 4 node(s) had untolerated
taint {nvidia.com/gpu: present}.` (wording of kube-scheduler TaintToleration, 1.28+).

## How to fix
Add the toleration (or enable ExtendedResourceToleration on the API server).

## Bad
```yaml
spec:
  containers:
  - resources: {limits: {nvidia.com/gpu: 1}}
```

## Good
```yaml
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - resources: {limits: {nvidia.com/gpu: 1}}
```

## References
- kubernetes/kubernetes `plugin/pkg/admission/extendedresourcetoleration/admission.go`
- kube-scheduler TaintToleration plugin (`pkg/scheduler/framework/plugins/tainttoleration`)
- reference/nvidia-gpu-stack.md §3.4
"""


def _ert_tolerations(resources: Iterable[str]) -> list[Toleration]:
    """The tolerations the ExtendedResourceToleration admission plugin adds to a pod requesting
    ``resources``: ``{key: <resource>, operator: Exists, effect: NoSchedule}`` each
    (plugin/pkg/admission/extendedresourcetoleration/admission.go ``Admit``)."""
    return [Toleration(key=name, operator="Exists", effect=NO_SCHEDULE) for name in resources]


def _ert_enabled(ctx: LintContext) -> bool:
    """Evidence that the ExtendedResourceToleration admission plugin runs in the cluster: GKE
    nodes, or a running pod that carries exactly the toleration the plugin adds for an
    accelerator it requests."""
    cluster = ctx.cluster
    if cluster is None:
        return False
    for node in cluster.nodes:
        labels = node.metadata.labels or {}
        if "cloud.google.com/gke-nodepool" in labels or str(node.spec.provider_id or "").startswith("gce://"):
            return True
    for pod in cluster.pods:
        spec = pod.spec
        requested: set[str] = set()
        for c in spec.containers:
            requested.update(n for n in (c.resources.limits or {}) if kinds.is_accelerator_resource(n))
        if requested and any(tol in spec.tolerations for tol in _ert_tolerations(requested)):
            return True
    return False


# The conventional GPU-node taints a pod needs a toleration for when no cluster is given.
_CONVENTIONAL_GPU_TAINTS = tuple(
    {"key": "nvidia.com/gpu", "value": value, "effect": "NoSchedule"} for value in ("", "present", "true")
)


def _node_taints(node: Any) -> list[Any]:
    """The node's taints TaintToleration's Filter looks at, minus the transient lifecycle ones."""
    return [
        taint
        for taint in node.spec.taints or ()
        if taint.effect in ("NoSchedule", "NoExecute") and not taint.key.startswith(_LIFECYCLE_PREFIXES)
    ]


@rule(
    id="gpu-taint-not-tolerated",
    severity="warning",
    category="placement",
    summary="GPU pod does not tolerate the taint of the GPU nodes (ctx: the actual taints)",
    docs=TAINT_DOCS,
    context="optional",
)
def gpu_taint_not_tolerated(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    ert = _ert_enabled(ctx)
    for ps in ctx.gpu_podsets():
        wanted = ctx.gpu_requests(ps)
        if not wanted:
            continue
        # typed pod: a toleration or selector the API would reject is left out (pod-template-invalid)
        pod = ps.pod()
        tols: list[Toleration] = pod.spec.tolerations
        holder = ctx.holder(ps)
        path = (*ps.spec_path, "tolerations") if pod_spec(ps).get("tolerations") else ps.spec_path
        if cluster is None or not cluster.nodes:
            if "nvidia.com/gpu" in wanted and not any(
                tolerations_tolerate_taint(tols, taint) for taint in _CONVENTIONAL_GPU_TAINTS
            ):
                yield ctx.report(
                    holder,
                    path,
                    f"{where(ps)} has no toleration for the conventional nvidia.com/gpu:NoSchedule taint of GPU "
                    "nodes (fine only where ExtendedResourceToleration adds it or GPU nodes are untainted)",
                    "add tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]",
                    severity="info",
                )
            continue
        candidates = []
        for node in cluster.nodes:
            alloc = node.status.allocatable or {}
            if all(name in alloc for name in wanted) and pod_matches_required_node_affinity(pod, node):
                candidates.append(node)
        if not candidates:
            continue  # no node offers the resource: gpu-unknown-resource-name / gpu-selector-matches-no-node
        if ert:
            tols = [*tols, *_ert_tolerations(wanted)]
        blocking: dict[tuple[str, str | None, str], int] = {}
        free_node = False
        for node in candidates:
            bad = [t for t in _node_taints(node) if not tolerations_tolerate_taint(tols, t)]
            if not bad:
                free_node = True
                break
            first = (bad[0].key, bad[0].value or None, bad[0].effect)
            blocking[first] = blocking.get(first, 0) + 1
        if free_node:
            continue
        (key, value, effect), _count = max(blocking.items(), key=lambda item: item[1])
        shown = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        tol = (
            f'{{key: {key}, operator: Equal, value: "{value}", effect: {effect}}}'
            if value
            else f"{{key: {key}, operator: Exists, effect: {effect}}}"
        )
        yield ctx.report(
            holder,
            path,
            f"{where(ps)} tolerates no taint of the {len(candidates)} node(s) offering its GPUs (e.g. {shown}): "
            'Pending ("node(s) had untolerated taint")',
            f"add tolerations: [{tol}]",
            severity="error",
        )


SELECTOR_DOCS = """
## What it catches
With `--cluster`: a GPU pod whose `nodeSelector` or required node affinity on GPU labels
(`nvidia.com/gpu.product`, `cloud.google.com/gke-accelerator`, `karpenter.k8s.aws/instance-gpu-name`,
`nvidia.com/gpu.present`, ...) matches no node. Karpenter labels are skipped when a NodePool exists
(it can create the node).

## Why it hurts
`0/12 nodes are available: 12 node(s) didn't match Pod's node affinity/selector.` The pod stays Pending;
a typo in a product label (`NVIDIA-A100-SXM4-80GB` vs GFD's `NVIDIA-A100-SXM4-80GB-MIG-1g.10gb`, or
`Tesla-T4` vs `tesla-t4`) is the usual cause. Values are compared exactly.

## How to fix
Copy the label value from a node (`kubectl get nodes -L nvidia.com/gpu.product`).

## Bad
```yaml
nodeSelector: {nvidia.com/gpu.product: A100}
```

## Good
```yaml
nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
```

## References
- kube-scheduler NodeAffinity plugin (`didn't match Pod's node affinity/selector`)
- NVIDIA GPU Feature Discovery labels (reference/nvidia-gpu-stack.md §2)
"""

_KARPENTER = ("karpenter.k8s.aws/", "karpenter.sh/", "karpenter.azure.com/")


@rule(
    id="gpu-selector-matches-no-node",
    severity="error",
    category="placement",
    summary="nodeSelector / required node affinity on GPU labels that no node satisfies",
    docs=SELECTOR_DOCS,
    context="required",
)
def gpu_selector_matches_no_node(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes:
        return
    has_nodepools = bool(ctx.by_kind("NodePool", include_cluster=True))
    node_labels = [(node.metadata.labels or {}, node.metadata.name) for node in cluster.nodes]
    for ps in ctx.podsets:
        # typed pod: nodeSelector values that are not strings are rejected by the API (pod-template-invalid)
        spec = ps.pod().spec
        gpu_sel = {
            k: v
            for k, v in spec.node_selector.items()
            if k in GPU_LABELS and not (has_nodepools and k.startswith(_KARPENTER))
        }
        holder = ctx.holder(ps)
        for key, value in gpu_sel.items():
            if not any(labels.get(key) == value for labels, _name in node_labels):
                seen = sorted({labels[key] for labels, _name in node_labels if key in labels})
                hint = f"nodes have {key} in {seen[:5]}" if seen else f"no node has the label {key}"
                yield ctx.report(
                    holder,
                    (*ps.spec_path, "nodeSelector", key),
                    f"{where(ps)} selects {key}={value} but no node matches ({hint}): Pending "
                    "(\"didn't match Pod's node affinity/selector\")",
                    f"use a value nodes carry ({', '.join(seen[:3]) or 'check the GPU node labels'})",
                )
        node_affinity = spec.affinity.node_affinity if spec.affinity is not None else None
        required = (
            node_affinity.required_during_scheduling_ignored_during_execution
            if node_affinity is not None
            else None
        )
        terms = required.node_selector_terms if required is not None else []
        gpu_terms = [
            t
            for t in terms
            if any(
                e.key in GPU_LABELS and not (has_nodepools and e.key.startswith(_KARPENTER))
                for e in t.match_expressions
            )
        ]
        if (
            gpu_terms
            and len(gpu_terms) == len(terms)
            and not any(
                node_selector_term_matches_labels(t, labels, name)
                for t in gpu_terms
                for labels, name in node_labels
            )
        ):
            yield ctx.report(
                holder,
                (*ps.spec_path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
                f"{where(ps)} requires GPU node labels that no node carries: Pending "
                "(\"didn't match Pod's node affinity/selector\")",
                "check the label values against `kubectl get nodes --show-labels`",
            )


UNPINNED_DOCS = """
## What it catches
With `--cluster`: the cluster has several GPU models (by `nvidia.com/gpu.product`, cloud accelerator or
Karpenter GPU-name labels) and a GPU pod pins none of them (no nodeSelector/affinity on a GPU model,
instance type or family label).

## Why it hurts
The pod lands on whichever model has room: a training job tuned for 80 GB H100s may start on 24 GB
L4s and die with `CUDA out of memory`, or a cheap batch job may hold the scarce big GPUs.

## How to fix
Pin the model with a nodeSelector (or preferred affinity when any model is fine but one is better).

## Bad
```yaml
resources: {limits: {nvidia.com/gpu: 8}}
```

## Good
```yaml
nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
resources: {limits: {nvidia.com/gpu: 8}}
```

## References
- NVIDIA GPU Feature Discovery labels (reference/nvidia-gpu-stack.md §2)
"""


def _gpu_model(labels: dict[str, str]) -> str | None:
    for key in (
        "nvidia.com/gpu.product",
        "cloud.google.com/gke-accelerator",
        "karpenter.k8s.aws/instance-gpu-name",
        "k8s.amazonaws.com/accelerator",
        "kubernetes.azure.com/accelerator",
        "amd.com/gpu.product-name",
    ):
        if labels.get(key):
            return labels[key].removesuffix("-SHARED")
    return None


def _pins_type(ps: Any) -> bool:
    if pod_spec(ps).get("nodeName"):
        return True
    if any(k in TYPE_PINNING_LABELS for k in node_selector(ps)):
        return True
    return any(
        e.get("key") in TYPE_PINNING_LABELS
        for t in (*required_terms(ps), *preferred_terms(ps))
        for e in term_expressions(t)
    )


@rule(
    id="gpu-type-unpinned",
    severity="info",
    category="placement",
    summary="the cluster has several GPU models and the GPU pod pins none",
    docs=UNPINNED_DOCS,
    context="required",
)
def gpu_type_unpinned(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    if cluster is None:
        return
    from gpuplane.k8s.selectors import pod_matches_required_node_affinity

    gpu_nodes = [(node, m) for node in cluster.gpu_nodes() if (m := _gpu_model(node.metadata.labels or {}))]
    if len({m for _, m in gpu_nodes}) < 2:
        return
    for ps in ctx.gpu_podsets():
        if _pins_type(ps):
            continue
        # Pinned in effect when every node the pod may be placed on (nodeSelector and required
        # node affinity, e.g. a Karpenter NodePool label) has the same GPU model.
        pod = ps.pod()
        models = sorted({m for node, m in gpu_nodes if pod_matches_required_node_affinity(pod, node)})
        if len(models) < 2:
            continue
        shown = ", ".join(models[:4]) + (", ..." if len(models) > 4 else "")
        yield ctx.report(
            ctx.holder(ps),
            ps.spec_path,
            f"{where(ps)} does not choose among the cluster's GPU models ({shown})",
            f"add nodeSelector: {{nvidia.com/gpu.product: <one of {shown}>}} (or a preferred affinity)",
        )


CPU_ON_GPU_DOCS = """
## What it catches
A pod that requests no GPU but tolerates the GPU nodes' taint (`nvidia.com/gpu`, `amd.com/gpu`, ...) or
every taint (`operator: Exists` without a key), and has no nodeSelector/affinity that keeps it elsewhere.
DaemonSets are exempt (node agents must run on GPU nodes).

## Why it hurts
GPU nodes are tainted so that only GPU work lands there. A CPU pod that tolerates the taint takes CPU and
memory on an expensive GPU node; GPU pods then fail with `Insufficient cpu` / `Insufficient memory` on
nodes whose GPUs are idle, and the node autoscaler cannot scale the GPU pool down.

## How to fix
Remove the toleration, or add a node affinity that keeps the pod off GPU nodes
(e.g. `nvidia.com/gpu.present DoesNotExist`).

## Bad
```yaml
tolerations:
- operator: Exists
```

## Good
```yaml
tolerations:
- {key: CriticalAddonsOnly, operator: Exists}
```

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/ ("Dedicated Nodes", "Nodes with Special Hardware")
"""

_TOPOLOGY_KEYS = {
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    *ZONE_LABELS,
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/region",
}


def _kept_off(ps: Any) -> bool:
    if pod_spec(ps).get("nodeName"):
        return True
    if any(k not in _TOPOLOGY_KEYS for k in node_selector(ps)):
        return True  # pinned to a specific pool
    for term in required_terms(ps):
        for e in term_expressions(term):
            key = as_str(e.get("key"))
            if key in GPU_LABELS and e.get("operator") in ("DoesNotExist", "NotIn"):
                return True
            if key not in _TOPOLOGY_KEYS and e.get("operator") in ("In", "Exists") and key not in GPU_LABELS:
                return True
    return False


@rule(
    id="cpu-pod-on-gpu-nodes",
    severity="warning",
    category="placement",
    summary="pod without GPU request tolerates GPU taints (or everything) and is not kept off GPU nodes",
    docs=CPU_ON_GPU_DOCS,
)
def cpu_pod_on_gpu_nodes(ctx: LintContext) -> Iterator[Finding]:
    gpu_ids = {id(ps) for ps in ctx.gpu_podsets()}
    for ps in ctx.podsets:
        if id(ps) in gpu_ids or kinds.is_daemon(ps):
            continue
        tols = tolerations(ps)
        if not tols:
            continue
        hit = None
        for i, t in enumerate(tols):
            if not isinstance(t.get("key", ""), str):
                continue  # the API rejects a toleration key that is not a string (pod-template-invalid)
            key = t.get("key") or ""
            if (not key and t.get("operator") == "Exists") or key in GPU_TAINT_KEYS:
                hit = i
                break
        if hit is None or _kept_off(ps):
            continue
        tol = tols[hit]
        what = (
            "every taint (operator: Exists with no key)" if not tol.get("key") else f"the {tol['key']} taint"
        )
        yield ctx.report(
            ctx.holder(ps),
            (*ps.spec_path, "tolerations", hit),
            f"{where(ps)} requests no GPU but tolerates {what}: it can take CPU and memory on GPU nodes",
            "remove the toleration, or add required node affinity {key: nvidia.com/gpu.present, operator: DoesNotExist}",
        )


SPREAD_DOCS = """
## What it catches
Multi-pod GPU training (PyTorchJob, MPIJob, TrainJob, JobSet, RayJob, Volcano Job, Indexed Job ...) with
no co-location: no zone (or rack / placement-group) affinity, no nodeSelector on a zone, no Kueue
topology-aware scheduling annotation, no JobSet exclusive topology — or a topology spread constraint on
the zone that actively scatters ranks. With `--cluster`, silent when the cluster has one zone.

## Why it hurts
Collective operations (all-reduce) run at the speed of the slowest link. Ranks in different zones talk
over the inter-zone network: 10x the latency of the intra-zone fabric, no RDMA/EFA/NVLink domain, and
inter-zone traffic is billed. NCCL timeouts (`Watchdog caught collective operation timeout`) and a
several-fold slowdown are the usual result.

## How to fix
Pin the job to one zone (nodeSelector or required affinity), or use a pod affinity on
`topology.kubernetes.io/zone` to the job's own pods, Kueue TAS
(`kueue.x-k8s.io/podset-required-topology`), or JobSet `alpha.jobset.sigs.k8s.io/exclusive-topology`.

## Bad
```yaml
topologySpreadConstraints:
- {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
```

## Good
```yaml
nodeSelector: {topology.kubernetes.io/zone: us-east-1a}
```

## References
- NCCL docs (network topology), AWS EFA placement groups
- Kueue topology-aware scheduling; JobSet exclusive placement
"""

_COLOCATE_ANNOTATIONS = (
    "kueue.x-k8s.io/podset-required-topology",
    "kueue.x-k8s.io/podset-preferred-topology",
    "alpha.jobset.sigs.k8s.io/exclusive-topology",
    "volcano.sh/network-topology",
)
_RACK_HINTS = (
    "zone",
    "rack",
    "block",
    "placement",
    "cluster-placement-group",
    "topology.k8s.aws/network-node",
    "cloud.google.com/gce-topology",
    "nvidia.com/gpu.clique",
)


def _colocated(ps: Any) -> bool:
    meta = as_dict(as_dict(ps.template).get("metadata"))
    notes = {**as_dict(ps.source.annotations), **as_dict(meta.get("annotations"))}
    if any(a in notes for a in _COLOCATE_ANNOTATIONS):
        return True
    if any(any(h in k for h in _RACK_HINTS) for k in node_selector(ps)):
        return True
    for t in (*required_terms(ps), *preferred_terms(ps)):
        if any(any(h in str(e.get("key", "")) for h in _RACK_HINTS) for e in term_expressions(t)):
            return True
    aff = pod_spec(ps).get("affinity")
    pod_aff = aff.get("podAffinity") if isinstance(aff, dict) else None
    if isinstance(pod_aff, dict):
        for key in (
            "requiredDuringSchedulingIgnoredDuringExecution",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ):
            for item in pod_aff.get(key) or ():
                term = item.get("podAffinityTerm", item) if isinstance(item, dict) else {}
                if any(h in str(term.get("topologyKey", "")) for h in _RACK_HINTS):
                    return True
    return False


def _scattering(ps: Any) -> int | None:
    tsc = pod_spec(ps).get("topologySpreadConstraints")
    for i, c in enumerate(tsc if isinstance(tsc, list) else ()):
        if isinstance(c, dict) and c.get("topologyKey") in ZONE_LABELS:
            return i
    return None


@rule(
    id="training-spread-across-zones",
    severity="warning",
    category="placement",
    summary="multi-node GPU training not co-located (no zone/rack affinity, or a spread that scatters ranks)",
    docs=SPREAD_DOCS,
    context="optional",
)
def training_spread_across_zones(ctx: LintContext) -> Iterator[Finding]:
    if ctx.cluster is not None and ctx.cluster.nodes:
        zones = {(n.metadata.labels or {}).get("topology.kubernetes.io/zone") for n in ctx.cluster.nodes}
        if len(zones - {None}) <= 1:
            return
    workloads: dict[int, list[Any]] = {}  # GPU training pod sets per workload, in input order
    for ps in ctx.gpu_podsets():
        if kinds.is_training(ps):
            workloads.setdefault(id(ps.source), []).append(ps)
    for sets in workloads.values():
        total = sum(max(ps.count, 0) for ps in sets)
        if total < 2:
            continue
        loose: list[Any] = []
        for ps in sets:
            scatter = _scattering(ps)
            if scatter is not None:  # a field of its own: reported where it is written
                yield ctx.report(
                    ctx.holder(ps),
                    (*ps.spec_path, "topologySpreadConstraints", scatter, "topologyKey"),
                    f"{where(ps)} spreads training ranks across zones: collectives cross the inter-zone network",
                    "remove the zone spread constraint and pin the job to one zone (nodeSelector or zone affinity)",
                )
            elif not _colocated(ps):
                loose.append(ps)
        if not loose:
            continue
        # one finding per workload, on the pod set with the most pods (the workers, usually)
        main = max(reversed(loose), key=lambda p: p.count)
        parts = f" ({', '.join(f'{ps.count} {ps.name}' for ps in sets)})" if len(sets) > 1 else ""
        yield ctx.report(
            ctx.holder(main),
            main.spec_path,
            f"{obj_label(main.source)} runs {total} GPU pods{parts} with nothing keeping them in one zone",
            "add nodeSelector {topology.kubernetes.io/zone: <zone>} (or a podAffinity on the zone, Kueue TAS, "
            "JobSet exclusive-topology)",
        )


SERVING_SPREAD_DOCS = """
## What it catches
A GPU inference workload with more than one replica and no topology spread constraint or pod
anti-affinity across nodes or zones.

## Why it hurts
The scheduler's default scoring packs GPU pods by resource fit, so several replicas can land on one node
(or one zone). One node drain, GPU Xid error or zone outage then takes all of them down at once, and
the replicas you pay for do not buy availability.

## How to fix
Add a `topologySpreadConstraints` entry on `kubernetes.io/hostname` (and the zone) with
`whenUnsatisfiable: ScheduleAnyway`, or a preferred pod anti-affinity.

## Bad
```yaml
replicas: 3
```

## Good
```yaml
topologySpreadConstraints:
- {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway,
   labelSelector: {matchLabels: {app: llm}}}
```

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/
"""


@rule(
    id="serving-replicas-not-spread",
    severity="info",
    category="placement",
    summary="multi-replica GPU inference without topology spread or anti-affinity across nodes or zones",
    docs=SERVING_SPREAD_DOCS,
)
def serving_replicas_not_spread(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        if ps.count < 2 or not kinds.is_inference(ps):
            continue
        spec = pod_spec(ps)
        if spec.get("topologySpreadConstraints"):
            continue
        aff = spec.get("affinity")
        if isinstance(aff, dict) and aff.get("podAntiAffinity"):
            continue
        path = (
            ("spec", "replicas")
            if ps.source.get("spec", "replicas") is not None and not ps.template_source
            else ps.spec_path
        )
        yield ctx.report(
            ctx.holder(ps) if path == ps.spec_path else ps.source,
            path,
            f"{where(ps)} runs {ps.count} GPU replicas with nothing spreading them across nodes or zones",
            "add topologySpreadConstraints on kubernetes.io/hostname (and topology.kubernetes.io/zone) "
            "with whenUnsatisfiable: ScheduleAnyway",
        )
