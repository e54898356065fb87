"""InterPodAffinity: required pod affinity, pod anti-affinity, and existing pods' anti-affinity.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go.
PreFilter counts, per (topologyKey, value), the existing pods matching *all* the incoming
pod's affinity terms, those matching each anti-affinity term, and the existing pods whose
own required anti-affinity terms match the incoming pod. Filter checks, in this order:
affinity (``ErrReasonAffinityRulesNotMatch``, UnschedulableAndUnresolvable; a pod whose terms
match no pod in the cluster but match itself may start the group), anti-affinity
(``ErrReasonAntiAffinityRulesNotMatch``, Unschedulable), existing pods' anti-affinity
(``ErrReasonExistingAntiAffinityRulesNotMatch``, Unschedulable).
A term's namespaces are ``namespaces`` plus those selected by ``namespaceSelector``; both
empty means the incoming pod's namespace (``GetNamespacesFromPodAffinityTerm``).

Cost: the pods a term matches come from the cluster's pod index (:mod:`..pod_index`), and the
existing pods' anti-affinity terms are kept grouped by what they select
(:class:`ExistingAntiAffinity`), so PreFilter costs the matching pods and the distinct terms,
not every pod of the cluster.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuplane.k8s.objects import Pod, PodAffinityTerm
from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable, unschedulable
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult
from gpuplane.scheduler.plugins.selectors_util import with_label_keys

if TYPE_CHECKING:
    from gpuplane.scheduler.index import ClusterIndex

NAME = "InterPodAffinity"
# ClusterIndex.cache key of the per-signature counts
COUNTS_CACHE = "interpodaffinity/counts"
# interpodaffinity/filtering.go
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"


class Term:
    """An affinity term resolved against its owner pod (upstream ``framework.AffinityTerm``)."""

    __slots__ = ("key", "namespace_selector", "namespaces", "selector")

    def __init__(self, term: PodAffinityTerm, owner: Pod) -> None:
        self.key = term.topology_key
        self.selector = with_label_keys(
            term.label_selector, owner, term.match_label_keys, term.mismatch_label_keys
        )
        self.namespaces = set(term.namespaces)
        self.namespace_selector = term.namespace_selector
        if not self.namespaces and self.namespace_selector is None:
            self.namespaces = {owner.metadata.namespace or "default"}

    def matches(self, pod: Pod, ns_labels: dict[str, str]) -> bool:
        namespace = pod.metadata.namespace or "default"
        if namespace not in self.namespaces and not (
            self.namespace_selector is not None and label_selector_matches(self.namespace_selector, ns_labels)
        ):
            return False
        return self.selector is not None and label_selector_matches(self.selector, pod.metadata.labels)

    def selects_namespace(self, namespace: str, ns_labels: dict[str, str]) -> bool:
        return namespace in self.namespaces or (
            self.namespace_selector is not None and label_selector_matches(self.namespace_selector, ns_labels)
        )

    def matching(self, index: ClusterIndex) -> list[tuple[Pod, int]]:
        """The pods on nodes this term matches, each with its node (what :meth:`matches` says
        of every pod, asked of the cluster's pod index)."""
        if self.selector is None:
            return []
        namespaces = [
            ns for ns in index.pods.namespaces() if self.selects_namespace(ns, index.namespace_labels(ns))
        ]
        return index.pods.select(namespaces, (self.selector,))


class ExistingAntiAffinity:
    """The required anti-affinity terms of the pods on nodes, grouped by what they select.

    Pods of one controller carry the same terms, so the incoming pod is matched once per
    distinct term (its topology key, resolved selector and namespaces), not once per pod. Kept
    in step with ``ClusterIndex.add_pod`` / ``remove_pod``.
    """

    __slots__ = ("_groups",)

    def __init__(self, index: ClusterIndex) -> None:
        # signature -> (term, {(id(owner), node, term position): ((key, node, owner), listings)})
        self._groups: dict[
            tuple, tuple[Term, dict[tuple[int, int, int], tuple[tuple[str, int, Pod], int]]]
        ] = {}
        for info in index.node_infos:
            for pod in info.pods:
                self.add(pod, info.index)

    def add(self, pod: Pod, j: int) -> None:
        for k, raw in enumerate(_required(pod, anti=True)):
            term = Term(raw, pod)
            group = self._groups.setdefault(_signature([term]), (term, {}))
            members = group[1]
            key = (id(pod), j, k)
            found = members.get(key)
            members[key] = ((term.key, j, pod), 1 if found is None else found[1] + 1)

    def remove(self, pod: Pod, j: int) -> None:
        for k, raw in enumerate(_required(pod, anti=True)):
            signature = _signature([Term(raw, pod)])
            group = self._groups.get(signature)
            if group is None:
                continue
            group[1].pop((id(pod), j, k), None)
            if not group[1]:
                del self._groups[signature]

    def matching(self, pod: Pod, ns_labels: dict[str, str]) -> list[tuple[str, int, Pod]]:
        """(topology key, node, owner) of every existing term that matches ``pod``."""
        out: list[tuple[str, int, Pod]] = []
        for term, members in self._groups.values():
            if term.matches(pod, ns_labels):
                for entry, listings in members.values():
                    out.extend([entry] * listings)
        return out


def _signature(terms: list[Term]) -> tuple:
    import msgspec  # deferred for start-up time

    return tuple(
        (
            t.key,
            msgspec.json.encode(t.selector),
            tuple(sorted(t.namespaces)),
            msgspec.json.encode(t.namespace_selector),
        )
        for t in terms
    )


def _required(pod: Pod, anti: bool) -> list[PodAffinityTerm]:
    affinity = pod.spec.affinity
    if affinity is None:
        return []
    block = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    return list(block.required_during_scheduling_ignored_during_execution) if block is not None else []


@dataclass(slots=True)
class AffinityState:
    """PreFilter's ``preFilterState``: the pod's terms, the existing pods whose anti-affinity
    matches it (topology key, node index, owner), and the counts per (key, value)."""

    affinity: list[Term]
    anti: list[Term]
    existing: list[tuple[str, int, Pod]]
    affinity_counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    anti_counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    existing_counts: Counter[tuple[str, str]] = field(default_factory=Counter)


class InterPodAffinity(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        pod = ctx.pod
        affinity = [Term(t, pod) for t in _required(pod, anti=False)]
        anti = [Term(t, pod) for t in _required(pod, anti=True)]
        # Existing pods' anti-affinity terms that match the incoming pod.
        index = ctx.index
        ns_labels = index.namespace_labels(ctx.namespace)
        existing = index.existing_anti_affinity().matching(pod, ns_labels)
        nominated_anti = any(_required(p, anti=True) for pods in ctx.added.values() for p in pods)
        if not affinity and not anti and not existing and not nominated_anti:
            return False
        ctx.state.write(AffinityState(affinity, anti, existing))
        return True

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        state = ctx.state.read(AffinityState)
        if state is None:
            return None, None
        affinity, anti = state.affinity, state.anti
        affinity_counts: Counter[tuple[str, str]] = Counter()
        anti_counts: Counter[tuple[str, str]] = Counter()
        if affinity or anti:
            # Pending pods of one controller share their terms: count once per signature.
            # (ClusterIndex.pods_changed drops these counts when pods are placed or removed)
            memo = ctx.index.cache.setdefault(COUNTS_CACHE, {})
            signature = (_signature(affinity), _signature(anti))
            cached = memo.get(signature)
            if cached is None:
                cached = memo[signature] = self._count(ctx, affinity, anti)
            affinity_counts, anti_counts = cached
        existing_counts: Counter[tuple[str, str]] = Counter()
        node_infos = ctx.index.node_infos
        for key, owner_idx, _ in state.existing:
            value = node_infos[owner_idx].labels.get(key)
            if value is not None:
                existing_counts[(key, value)] += 1
        state.affinity_counts, state.anti_counts, state.existing_counts = (
            affinity_counts,
            anti_counts,
            existing_counts,
        )
        return None, None

    @staticmethod
    def _count(
        ctx: PodContext, affinity: list[Term], anti: list[Term]
    ) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
        affinity_counts: Counter[tuple[str, str]] = Counter()
        anti_counts: Counter[tuple[str, str]] = Counter()
        index = ctx.index
        infos = index.node_infos
        if affinity:
            # Pods matching every term: the first term's matches, checked against the others.
            first, rest = affinity[0], affinity[1:]
            for other, j in first.matching(index):
                if rest:
                    ns_labels = index.namespace_labels(other.metadata.namespace or "default")
                    if not all(t.matches(other, ns_labels) for t in rest):
                        continue
                labels = infos[j].labels
                for t in affinity:
                    if t.key in labels:
                        affinity_counts[(t.key, labels[t.key])] += 1
        for t in anti:
            for _, j in t.matching(index):
                labels = infos[j].labels
                if t.key in labels:
                    anti_counts[(t.key, labels[t.key])] += 1
        return affinity_counts, anti_counts

    @staticmethod
    def _with_nominated(
        ctx: PodContext,
        state: AffinityState,
        labels: dict[str, str],
        added: list[Pod],
        affinity_counts: Counter[tuple[str, str]],
        anti_counts: Counter[tuple[str, str]],
        existing_counts: Counter[tuple[str, str]],
    ) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]], Counter[tuple[str, str]]]:
        """The counts with the pods nominated to this node added: upstream's ``AddPod``
        PreFilter extension (``updateWithPod`` with +1) on the cloned state that
        ``addGEPriorityNominatedPods`` prepares for this node."""
        ns_labels = ctx.index.namespace_labels
        affinity_counts, anti_counts, existing_counts = (
            Counter(affinity_counts),
            Counter(anti_counts),
            Counter(existing_counts),
        )
        own_ns = ns_labels(ctx.namespace)
        for other in added:
            other_ns = ns_labels(other.metadata.namespace or "default")
            if state.affinity and all(t.matches(other, other_ns) for t in state.affinity):
                for t in state.affinity:
                    if t.key in labels:
                        affinity_counts[(t.key, labels[t.key])] += 1
            for t in state.anti:
                if t.key in labels and t.matches(other, other_ns):
                    anti_counts[(t.key, labels[t.key])] += 1
            for raw in _required(other, anti=True):
                term = Term(raw, other)
                if term.key in labels and term.matches(ctx.pod, own_ns):
                    existing_counts[(term.key, labels[term.key])] += 1
        return affinity_counts, anti_counts, existing_counts

    @staticmethod
    def _without(
        ctx: PodContext,
        affinity: list[Term],
        counts: Counter[tuple[str, str]],
        labels: dict[str, str],
        removed: list[Pod] | tuple[()],
    ) -> Counter[tuple[str, str]]:
        """The affinity counts with pods removed from this node (a preemption dry run):
        upstream's ``RemovePod`` PreFilter extension (``updateWithPod`` with -1) takes each
        removed pod matching all the terms off every term's (key, value) of the node, and
        drops entries that reach zero, so the map can become empty."""
        ns_labels = ctx.index.namespace_labels
        gone = sum(
            1
            for p in removed
            if all(t.matches(p, ns_labels(p.metadata.namespace or "default")) for t in affinity)
        )
        if not gone:
            return counts
        adjusted = Counter(counts)
        for t in affinity:
            if t.key in labels:
                adjusted[(t.key, labels[t.key])] -= gone
        return Counter({k: v for k, v in adjusted.items() if v != 0})

    def reprieve_neutral(self, ctx: PodContext, pod: Pod) -> bool:
        """What a removed pod can change in :meth:`filter`: the affinity count (it matches every
        affinity term), an anti-affinity count (it matches a term) or an existing pod's
        anti-affinity (it owns a term that matches the incoming pod)."""
        state = ctx.state.require(AffinityState)
        ns_labels = ctx.index.namespace_labels(pod.metadata.namespace or "default")
        if state.affinity and all(t.matches(pod, ns_labels) for t in state.affinity):
            return False
        if any(t.matches(pod, ns_labels) for t in state.anti):
            return False
        return not any(owner is pod for _, _, owner in state.existing)

    def reprieve_nodes(self, ctx: PodContext) -> Collection[int] | None:
        """The nodes of the pods :meth:`reprieve_neutral` may call counted: those matching the
        first affinity term (a superset of those matching all), those matching an anti-affinity
        term, and the owners of existing terms that match the incoming pod."""
        state = ctx.state.require(AffinityState)
        index = ctx.index
        nodes = {j for _, j, _ in state.existing}
        for t in (*state.affinity[:1], *state.anti):
            nodes.update(j for _, j in t.matching(index))
        return nodes

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        state = ctx.state.require(AffinityState)
        affinity, anti, existing = state.affinity, state.anti, state.existing
        affinity_counts, anti_counts, existing_counts = (
            state.affinity_counts,
            state.anti_counts,
            state.existing_counts,
        )
        labels = node.labels
        removed = ctx.removed.get(node.index, ())
        added = ctx.added.get(node.index, ())
        if added:
            affinity_counts, anti_counts, existing_counts = self._with_nominated(
                ctx, state, labels, added, affinity_counts, anti_counts, existing_counts
            )
        if affinity:
            if removed:
                affinity_counts = self._without(ctx, affinity, affinity_counts, labels, removed)
            pods_exist = True
            for t in affinity:
                value = labels.get(t.key)
                if value is None:
                    return unresolvable(NAME, ERR_REASON_AFFINITY)
                if affinity_counts.get((t.key, value), 0) <= 0:
                    pods_exist = False
            if not pods_exist:
                ns_labels = ctx.index.namespace_labels(ctx.namespace)
                self_match = all(t.matches(ctx.pod, ns_labels) for t in affinity)
                if affinity_counts or not self_match:
                    return unresolvable(NAME, ERR_REASON_AFFINITY)
        for t in anti:
            value = labels.get(t.key)
            if value is None:
                continue
            count = anti_counts.get((t.key, value), 0)
            if removed:
                ns = ctx.index.namespace_labels
                count -= sum(1 for p in removed if t.matches(p, ns(p.metadata.namespace or "default")))
            if count > 0:
                return unschedulable(NAME, ERR_REASON_ANTI_AFFINITY)
        for (key, value), count in existing_counts.items():
            if labels.get(key) != value:
                continue
            if removed:
                count -= sum(1 for k, _, owner in existing if k == key and any(owner is r for r in removed))
            if count > 0:
                return unschedulable(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None
