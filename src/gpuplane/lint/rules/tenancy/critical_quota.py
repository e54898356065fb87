"""GKE: critical-priority pods outside kube-system need a PriorityClass-scoped ResourceQuota."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import (
    node_selector,
    obj_label,
    pod_spec,
    required_terms,
    term_expressions,
    where,
)
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

CRITICAL = ("system-node-critical", "system-cluster-critical")
GKE_DRIVER_DIR = "/home/kubernetes/bin/nvidia"
GKE_LABEL_PREFIX = "cloud.google.com/gke-"
OPERAND_CLASS = (
    "system-node-critical"  # the GPU Operator's operands (ClusterPolicy daemonsets.priorityClassName)
)


def _helm_installs(ctx: LintContext, chart: str) -> list[tuple[Manifest, str | None, dict[str, Any]]]:
    """(object, release namespace, values) of kustomize HelmChartInflationGenerators / Flux HelmReleases."""
    out: list[tuple[Manifest, str | None, dict[str, Any]]] = []
    for gen in ctx.by_kind("HelmChartInflationGenerator"):
        if gen.get("name") == chart:
            values = gen.get("valuesInline")
            out.append((gen, gen.get("namespace"), values if isinstance(values, dict) else {}))
    for rel in ctx.by_kind("HelmRelease"):
        if rel.get("spec", "chart", "spec", "chart") == chart:
            values = rel.get("spec", "values")
            ns = rel.get("spec", "targetNamespace") or rel.namespace
            out.append((rel, ns, values if isinstance(values, dict) else {}))
    return out


def _driver_dir(values: dict[str, Any]) -> Any:
    paths = values.get("hostPaths")
    return paths.get("driverInstallDir") if isinstance(paths, dict) else None


def gke_cluster(ctx: LintContext) -> bool:
    """The ``--cluster`` snapshot is a GKE cluster (its nodes carry ``cloud.google.com/gke-*`` labels)."""
    return ctx.cluster is not None and any(
        any(k.startswith(GKE_LABEL_PREFIX) for k in (n.metadata.labels or {})) for n in ctx.cluster.nodes
    )


def _gke_operator(ctx: LintContext, values: dict[str, Any]) -> bool:
    """A GPU Operator install set up for GKE: GKE's driver directory in its values or in a ClusterPolicy."""
    if _driver_dir(values) == GKE_DRIVER_DIR:
        return True
    return any(
        cp.get("spec", "hostPaths", "driverInstallDir") == GKE_DRIVER_DIR
        for cp in ctx.by_kind("ClusterPolicy", "nvidia.com")
    )


def _gke_pod(ps: Any) -> bool:
    """A pod template that selects GKE nodes by a ``cloud.google.com/gke-*`` label."""
    if any(str(k).startswith(GKE_LABEL_PREFIX) for k in node_selector(ps)):
        return True
    return any(
        str(e.get("key", "")).startswith(GKE_LABEL_PREFIX)
        for t in required_terms(ps)
        for e in term_expressions(t)
    )


def _covered(ctx: LintContext, namespace: str, priority_class: str) -> bool:
    for q in ctx.by_kind("ResourceQuota", "", include_cluster=True):
        if (q.namespace or "default") != namespace:
            continue
        exprs = q.get("spec", "scopeSelector", "matchExpressions")
        for e in exprs if isinstance(exprs, list) else []:
            if not isinstance(e, dict) or e.get("scopeName") != "PriorityClass":
                continue
            values = e.get("values")
            if e.get("operator") == "Exists" or (
                e.get("operator") == "In" and isinstance(values, list) and priority_class in values
            ):
                return True
    return False


@rule(
    id="gke-critical-pods-without-quota",
    severity="warning",
    category="tenancy",
    summary="GKE: system-*-critical pods outside kube-system without a PriorityClass-scoped ResourceQuota are refused.",
)
def gke_critical_pods_without_quota(ctx: LintContext) -> Iterator[Finding]:
    gke = gke_cluster(ctx)
    for obj, ns, values in _helm_installs(ctx, "gpu-operator"):
        namespace = ns or "gpu-operator"
        if not (gke or _gke_operator(ctx, values)):
            continue
        if namespace == "kube-system" or _covered(ctx, namespace, OPERAND_CLASS):
            continue
        path: FieldPath = (
            ("namespace",) if obj.kind == "HelmChartInflationGenerator" else ("metadata", "name")
        )
        yield ctx.report(
            obj,
            path,
            f"{obj_label(obj)} installs the GPU Operator into namespace {namespace} on GKE, whose operands run "
            f"with priorityClassName {OPERAND_CLASS}; GKE admits pods of the system-*-critical classes only "
            "in namespaces with a ResourceQuota scoped to them, so the DaemonSets create no pods.",
            f"Add a ResourceQuota in {namespace} with scopeSelector PriorityClass In [system-node-critical, "
            "system-cluster-critical] (hard pods: enough for every operand on every GPU node).",
        )
    for ps in ctx.podsets:
        pc = pod_spec(ps).get("priorityClassName")
        ns = ps.source.namespace or "default"
        if pc not in CRITICAL or ns == "kube-system" or not (gke or _gke_pod(ps)):
            continue
        if _covered(ctx, ns, str(pc)):
            continue
        yield ctx.report(
            ctx.holder(ps),
            (*ps.spec_path, "priorityClassName"),
            f"{where(ps)} uses {pc} in namespace {ns} on GKE: without a ResourceQuota in {ns} scoped to that "
            "PriorityClass the API server refuses its pods (insufficient quota to match these scopes).",
            f"Add a ResourceQuota in {ns} with scopeSelector PriorityClass In [{pc}], or run it in kube-system.",
        )
