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

Cost: the matching pods come from the cluster's pod index (:mod:`..pod_index`) and the node
inclusion tests run once per node shape (:mod:`gpuplane.k8s.node_shapes`), so PreFilter costs the matching
pods plus the shapes (plus the nodes, for a hostname key), not every pod of the cluster; the
global minimum is computed once in PreFilter (upstream's ``TpKeyToCriticalPaths``), not per node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from gpuplane.k8s.node_shapes import HOSTNAME_LABEL, selects_node_identity
from gpuplane.k8s.objects import LabelSelector, Pod, TopologySpreadConstraint
from gpuplane.k8s.selectors import (
    label_selector_matches,
)
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable, unschedulable
from gpuplane.scheduler.index import ClusterIndex
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


@dataclass(slots=True)
class SpreadState:
    """PreFilter's ``preFilterState``: the hard constraints and, per constraint, the matching
    pods counted per topology domain of the eligible nodes, and the smallest of those counts."""

    constraints: list[_Constraint]
    counts: list[Counter[str]] = field(default_factory=list)
    minimums: list[int] = field(default_factory=list)
    # Per constraint, the domains with a matching pod (the nonzero entries of ``counts``), and
    # per node the matching pods on it: what a removed pod can take off (preemption dry runs).
    hits: list[Counter[str]] = field(default_factory=list)
    on_node: list[dict[int, list[Pod]]] = field(default_factory=list)
    # ids of every pod some constraint counts (what preemption's reprieve must re-check)
    counted: set[int] = field(default_factory=set)


def eligible_domains(
    index: ClusterIndex, pod: Pod, keys: list[str], policies: list[tuple[bool, bool]]
) -> list[dict[int, str | None]]:
    """Per policy ``(affinity_honor, taints_honor)``: node shape -> the domain value of its nodes
    (None: per node, the hostname) for the shapes whose nodes carry every key in ``keys`` and pass
    the node inclusion policies; the shapes absent are not counted. When the pod's node selection
    names nodes, shapes do not decide: see :func:`eligible_nodes`."""
    shapes = index.shapes
    infos = index.node_infos
    out: list[dict[int, str | None]] = [{} for _ in policies]
    for sid, rep in enumerate(shapes.reps):
        labels = infos[rep].labels
        if any(k not in labels for k in keys):
            continue
        inclusion = NodeInclusion(pod, infos[rep].node)
        for i, (affinity_honor, taints_honor) in enumerate(policies):
            if inclusion.admits(affinity_honor, taints_honor):
                key = keys[i]
                out[i][sid] = None if key == HOSTNAME_LABEL else labels[key]
    return out


def eligible_nodes(
    index: ClusterIndex, pod: Pod, keys: list[str], policies: list[tuple[bool, bool]]
) -> list[set[int]]:
    """:func:`eligible_domains` node by node: per policy, the nodes that count."""
    out: list[set[int]] = [set() for _ in policies]
    for info in index.node_infos:
        labels = info.labels
        if any(k not in labels for k in keys):
            continue
        inclusion = NodeInclusion(pod, info.node)
        for i, (affinity_honor, taints_honor) in enumerate(policies):
            if inclusion.admits(affinity_honor, taints_honor):
                out[i].add(info.index)
    return out


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
        index = ctx.index
        infos = index.node_infos
        keys = [c.key for c in constraints]
        policies = [(c.affinity_honor, c.taints_honor) for c in constraints]
        counts: list[Counter[str]] = [Counter() for _ in constraints]
        hits: list[Counter[str]] = [Counter() for _ in constraints]
        on_node: list[dict[int, list[Pod]]] = [{} for _ in constraints]
        matching = [self._matching(ctx, c) for c in constraints]
        counted: set[int] = set()
        for i, found in enumerate(matching):
            for pod, j in found:
                on_node[i].setdefault(j, []).append(pod)
                counted.add(id(pod))
        if selects_node_identity(ctx.pod):
            per_node = eligible_nodes(index, ctx.pod, keys, policies)
            for i, c in enumerate(constraints):
                for j in sorted(per_node[i]):
                    counts[i].setdefault(infos[j].labels[c.key], 0)
                for _, j in matching[i]:
                    if j in per_node[i]:
                        hits[i][infos[j].labels[c.key]] += 1
        else:
            domains = eligible_domains(index, ctx.pod, keys, policies)
            shape_of = index.shapes.shape_of
            hostnames = index.shapes.hostnames
            for i, c in enumerate(constraints):
                by_shape = domains[i]
                domain_counts = counts[i]
                for sid, value in by_shape.items():
                    if value is None:
                        domain_counts.update(hostnames[sid])
                    else:
                        domain_counts.setdefault(value, 0)
                for _, j in matching[i]:
                    sid = shape_of[j]
                    if sid in by_shape:
                        value = by_shape[sid]
                        hits[i][infos[j].labels[c.key] if value is None else value] += 1
        for domain_counts, domain_hits in zip(counts, hits, strict=True):
            domain_counts.update(domain_hits)
        state.counts = counts
        state.hits = hits
        state.on_node = on_node
        state.counted = counted
        state.minimums = [min(domain_counts.values()) if domain_counts else 0 for domain_counts in counts]
        return None, None

    @staticmethod
    def _matching(ctx: PodContext, c: _Constraint) -> list[tuple[Pod, int]]:
        """The pods a constraint counts: its selector's matches in the pod's namespace, not
        terminating (``countPodsMatchSelector``)."""
        if c.selector is None:
            return []
        found = ctx.index.pods.select((ctx.namespace,), (c.selector,))
        return [entry for entry in found if entry[0].metadata.deletion_timestamp is None]

    def reprieve_neutral(self, ctx: PodContext, pod: Pod) -> bool:
        """A pod no constraint counts changes no domain count when removed or put back."""
        return id(pod) not in ctx.state.require(SpreadState).counted

    def reprieve_nodes(self, ctx: PodContext) -> Collection[int] | None:
        """The nodes of the counted pods (``on_node`` lists them per constraint)."""
        on_node = ctx.state.require(SpreadState).on_node
        if len(on_node) == 1:
            return on_node[0].keys()
        return set().union(*(by_node.keys() for by_node in on_node))

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(SpreadState)
        constraints = state.constraints
        labels = node.labels
        for c in constraints:
            if c.key not in labels:
                return unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)
        counts = state.counts
        removed = ctx.removed.get(node.index, ())
        removed_ids = {id(p) for p in removed} if removed else set()
        for i, c in enumerate(constraints):
            domain_counts = counts[i]
            value = labels[c.key]
            match_num = domain_counts.get(value, 0)
            if removed:
                # The removed pods this constraint counts: its matching pods on this node.
                match_num -= sum(1 for p in state.on_node[i].get(node.index, ()) if id(p) in removed_ids)
            if len(domain_counts) < c.min_domains:
                minimum = 0
            else:
                minimum = state.minimums[i]
                if removed and value in domain_counts:
                    minimum = min(minimum, match_num)
            if match_num + (1 if c.self_match else 0) - minimum > c.max_skew:
                return unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_nodes(self, ctx: PodContext, nodes: np.ndarray) -> list[tuple[np.ndarray, Status]]:
        """:meth:`filter` on every node of ``nodes`` at once (nothing removed): a node's verdict
        depends only on its value of each constraint's topology key, so each constraint is a
        lookup of the matching count by the node's domain position (``ClusterIndex.label_domains``)."""
        state = ctx.state.require(SpreadState)
        index = ctx.index
        domains = [index.label_domains(c.key) for c in state.constraints]
        missing = np.zeros(len(nodes), dtype=bool)
        for ids, _ in domains:
            missing |= ids[nodes] < 0
        skewed = np.zeros(len(nodes), dtype=bool)
        for i, c in enumerate(state.constraints):
            ids, positions = domains[i]
            # One slot per domain value, and a last one (zero) that position -1 reads.
            matched = np.zeros(len(positions) + 1, dtype=np.int64)
            for value, count in state.hits[i].items():
                matched[positions[value]] = count
            minimum = 0 if len(state.counts[i]) < c.min_domains else state.minimums[i]
            skewed |= matched[ids[nodes]] + (1 if c.self_match else 0) - minimum > c.max_skew
        failed = [
            (np.nonzero(missing)[0], unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)),
            (np.nonzero(skewed & ~missing)[0], unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)),
        ]
        failed = [(nodes[where], status) for where, status in failed if len(where)]
        failed.sort(key=lambda item: int(item[0][0]))
        return failed
