"""Topology spreading: training spread across zones, serving replicas not spread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpuplane.lint import kinds
from gpuplane.lint.context import LintContext, pod_spec
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._collectives import workload_communicates
from gpuplane.lint.rules._common import (
    ZONE_LABELS,
    as_dict,
    node_selector,
    obj_label,
    preferred_terms,
    required_terms,
    term_expressions,
    where,
)
from gpuplane.ruleset import rule

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
            items = pod_aff.get(key)
            for item in items if isinstance(items, list) else ():
                term = item.get("podAffinityTerm", item) if isinstance(item, dict) else {}
                if isinstance(term, dict) and any(h in str(term.get("topologyKey", "")) for h in _RACK_HINTS):
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
        source = sets[0].source
        if not workload_communicates(source, [ps.template for ps in ctx.podsets if ps.source is source]):
            continue  # independent pods: nothing crosses zones
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


@rule(
    id="serving-replicas-not-spread",
    severity="info",
    category="placement",
    summary="multi-replica GPU inference without topology spread or anti-affinity across nodes or zones",
    tier="opt-in",
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
