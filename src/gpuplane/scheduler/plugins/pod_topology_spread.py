"""PodTopologySpread: hard (``DoNotSchedule``) topology spread constraints.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/
(plugin.go, filtering.go, common.go). PreFilter counts, per topology domain, the pods
matching each constraint's selector (``matchLabelKeys`` values ANDed in) among nodes that
(1) carry every constraint's topology key, (2) match the pod's nodeSelector/affinity when
``nodeAffinityPolicy`` is ``Honor`` (default) and (3) tolerate the node's taints when
``nodeTaintsPolicy`` is ``Honor`` (default ``Ignore``). Filter rejects a node when
``matching in its domain + self-match - global minimum > maxSkew`` (Unschedulable), the
minimum being 0 while fewer than ``minDomains`` domains exist; a node missing a topology
key is UnschedulableAndUnresolvable. The cluster default constraints are ``ScheduleAnyway``
(score only), so they never filter.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gpuplane.k8s.objects import LabelSelector, Pod, TopologySpreadConstraint
from gpuplane.k8s.selectors import (
    label_selector_matches,
)
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable, unschedulable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.selectors_util import NodeInclusion, with_label_keys

NAME = "PodTopologySpread"
# podtopologyspread/plugin.go
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


class _Constraint:
    __slots__ = ("affinity_honor", "key", "max_skew", "min_domains", "selector", "self_match", "taints_honor")

    def __init__(self, c: TopologySpreadConstraint, pod: Pod) -> None:
        self.key = c.topology_key
        self.max_skew = c.max_skew
        self.min_domains = c.min_domains or 1
        self.selector: LabelSelector | None = with_label_keys(c.label_selector, pod, c.match_label_keys)
        self.self_match = self.selector is not None and label_selector_matches(
            self.selector, pod.metadata.labels
        )
        self.affinity_honor = (c.node_affinity_policy or "Honor") == "Honor"
        self.taints_honor = (c.node_taints_policy or "Ignore") == "Honor"

    def matches(self, pod: Pod) -> bool:
        return self.selector is not None and label_selector_matches(self.selector, pod.metadata.labels)


def _counts_pod(pod: Pod, namespace: str) -> bool:
    return (pod.metadata.namespace or "default") == namespace and pod.metadata.deletion_timestamp is None


@dataclass(slots=True)
class SpreadState:
    """PreFilter's ``preFilterState``: the hard constraints and, per constraint, the matching
    pods counted per topology domain of the eligible nodes."""

    constraints: list[_Constraint]
    counts: list[Counter[str]] = field(default_factory=list)


class PodTopologySpread(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        hard = [
            c for c in ctx.pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"
        ]
        if not hard:
            return False
        ctx.state.write(SpreadState([_Constraint(c, ctx.pod) for c in hard]))
        return True

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        state = ctx.state.read(SpreadState)
        if state is None:
            return None, None
        constraints = state.constraints
        pod = ctx.pod
        namespace = ctx.namespace
        counts: list[Counter[str]] = [Counter() for _ in constraints]
        keys = [c.key for c in constraints]
        for info in ctx.index.node_infos:
            labels = info.labels
            if any(k not in labels for k in keys):
                continue
            inclusion = NodeInclusion(pod, info.node)
            for i, c in enumerate(constraints):
                if not inclusion.admits(c.affinity_honor, c.taints_honor):
                    continue
                n = sum(1 for p in info.pods if _counts_pod(p, namespace) and c.matches(p))
                counts[i][labels[c.key]] += n
        state.counts = counts
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(SpreadState)
        constraints = state.constraints
        labels = node.labels
        for c in constraints:
            if c.key not in labels:
                return unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)
        counts = state.counts
        removed = ctx.removed.get(node.index, ())
        for i, c in enumerate(constraints):
            domain_counts = counts[i]
            value = labels[c.key]
            match_num = domain_counts.get(value, 0)
            if removed:
                match_num -= sum(1 for p in removed if _counts_pod(p, ctx.namespace) and c.matches(p))
            if len(domain_counts) < c.min_domains:
                minimum = 0
            else:
                minimum = min(domain_counts.values()) if domain_counts else 0
                if removed and value in domain_counts:
                    minimum = min(minimum, match_num)
            if match_num + (1 if c.self_match else 0) - minimum > c.max_skew:
                return unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None
