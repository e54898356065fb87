"""GPU node taints a GPU pod does not tolerate."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from gpuplane.k8s.objects import Toleration
from gpuplane.k8s.selectors import node_selection_key
from gpuplane.k8s.tolerations import NO_SCHEDULE, tolerations_tolerate_taint
from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import targets_gke, where
from gpuplane.ruleset import rule

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


def _ert_tolerations(resources: Iterable[str]) -> list[Toleration]:
    """The tolerations the ExtendedResourceToleration admission plugin adds to a pod requesting
    ``resources``: ``{key: <resource>, operator: Exists, effect: NoSchedule}`` each
    (plugin/pkg/admission/extendedresourcetoleration/admission.go ``Admit``)."""
    return [Toleration(key=name, operator="Exists", effect=NO_SCHEDULE) for name in resources]


ERT_PLUGIN = "ExtendedResourceToleration"


def _ert_enabled(ctx: LintContext) -> bool:
    """Evidence that the ExtendedResourceToleration admission plugin runs in the cluster: the user
    declares it (.gpuplane.yaml ``cluster.admission-plugins``), GKE nodes, or a running pod that
    carries exactly the toleration the plugin adds for an accelerator it requests."""
    if ERT_PLUGIN in ctx.admission_plugins:
        return True
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
    context="optional",
)
def gpu_taint_not_tolerated(ctx: LintContext) -> Iterator[Finding]:
    cluster = ctx.cluster
    ert = _ert_enabled(ctx)
    # The answer depends on the pod only through its node selection, the GPU resources it asks
    # for and its tolerations: computed once per distinct triple, and over node shapes
    # (lint.cluster_nodes), so diagnose (which lints every workload of the cluster) never walks
    # every node for every pod set.
    verdicts: dict[tuple[bytes, tuple[str, ...], bytes], tuple[int, tuple[str, str | None, str]] | None] = {}
    for ps in ctx.gpu_podsets():
        wanted = ctx.gpu_requests(ps)
        if not wanted:
            continue
        # typed pod: a toleration or selector the API would reject is left out (pod-template-invalid)
        pod = ps.pod()
        tols: list[Toleration] = pod.spec.tolerations
        if ert or targets_gke(ps):
            # the API server adds {key: <resource>, operator: Exists} for each requested resource
            tols = [*tols, *_ert_tolerations(wanted)]
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
        memo_key = (node_selection_key(pod), tuple(sorted(wanted)), _encode(tols))
        if memo_key not in verdicts:
            verdicts[memo_key] = _untolerated(ctx, pod, wanted, tols)
        verdict = verdicts[memo_key]
        if verdict is None:
            continue
        candidate_count, (key, value, effect) = verdict
        shown = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        tol = (
            f'{{key: {key}, operator: Equal, value: "{value}", effect: {effect}}}'
            if value
            else f"{{key: {key}, operator: Exists, effect: {effect}}}"
        )
        yield ctx.report(
            holder,
            path,
            f"{where(ps)} tolerates no taint of the {candidate_count} node(s) offering its GPUs (e.g. {shown}): "
            'Pending ("node(s) had untolerated taint")',
            f"add tolerations: [{tol}]",
            severity="error",
        )


def _encode(tolerations: list[Toleration]) -> bytes:
    import msgspec  # for start-up time: only cluster-context linting needs it

    return msgspec.json.encode(tolerations)


def _untolerated(
    ctx: LintContext, pod: Any, wanted: Any, tols: list[Toleration]
) -> tuple[int, tuple[str, str | None, str]] | None:
    """When every node offering ``wanted`` that the pod may select has a taint ``tols`` does not
    tolerate: the number of those nodes and the most common first untolerated taint; else None.
    Asked once per node shape (equal node selection labels, taints and resources); shapes come in
    the order of their first node, so a tie between taints goes to the one a node walk meets first."""
    view = ctx.cluster_nodes()
    shapes, selected = view.selected(pod)
    nodes = view.nodes
    candidates = [
        s for s in selected if all(name in nodes[shapes.reps[s]].status.allocatable for name in wanted)
    ]
    if not candidates:
        return None  # no node offers the resource: gpu-unknown-resource-name / gpu-selector-matches-no-node
    blocking: dict[tuple[str, str | None, str], int] = {}
    for s in candidates:
        bad = [t for t in _node_taints(nodes[shapes.reps[s]]) if not tolerations_tolerate_taint(tols, t)]
        if not bad:
            return None
        first = (bad[0].key, bad[0].value or None, bad[0].effect)
        blocking[first] = blocking.get(first, 0) + len(shapes.members[s])
    top, _count = max(blocking.items(), key=lambda item: item[1])
    return view.count(shapes, candidates), top
