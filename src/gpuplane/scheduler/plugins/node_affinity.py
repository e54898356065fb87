"""NodeAffinity: ``spec.nodeSelector`` and required node affinity.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go.
PreFilter turns ``matchFields`` on ``metadata.name`` (``In``) into a PreFilterResult node set
(the terms are ORed, a term's requirements ANDed) and rejects with ``errReasonConflict`` when
every term names a disjoint set; Filter rejects with ``ErrReasonPod`` (UnschedulableAndUnresolvable).
"""

from __future__ import annotations

from gpuplane.k8s.node_shapes import selects_node_identity
from gpuplane.k8s.selectors import pod_matches_node_selector, pod_matches_required_node_affinity
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult

NAME = "NodeAffinity"
# node_affinity.go ErrReasonPod
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
# node_affinity.go errReasonConflict
ERR_REASON_CONFLICT = "pod affinity terms conflict"


def _required_terms(ctx: PodContext) -> list | None:
    affinity = ctx.pod.spec.affinity
    if affinity is None or affinity.node_affinity is None:
        return None
    required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
    return None if required is None else required.node_selector_terms


class NodeAffinity(FilterPlugin):
    name = NAME
    static = True

    def relevant(self, ctx: PodContext) -> bool:
        return bool(ctx.pod.spec.node_selector) or _required_terms(ctx) is not None

    def static_key(self, ctx: PodContext) -> bool:
        """Per-node evaluation when the pod selects by hostname or by metadata.name."""
        return selects_node_identity(ctx.pod)

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        terms = _required_terms(ctx)
        if not terms:
            return None, None
        names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == "metadata.name" and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, None  # this term allows every node: the terms are ORed
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, unresolvable(NAME, ERR_REASON_CONFLICT)
        return (PreFilterResult(names) if names else None), None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        pod = ctx.pod
        if pod_matches_node_selector(pod, node.node) and pod_matches_required_node_affinity(pod, node.node):
            return None
        return unresolvable(NAME, ERR_REASON_POD)
