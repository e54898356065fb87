"""The cluster indexes (issue 14 item 1) answer exactly what the naive walk over every pod and
node answers, on random clusters, and do the work of the matching pods only.

- :class:`PodIndex` ``select`` against ``label_selector_matches`` over every pod on a node (all
  four operators, refused requirements, nil and empty selectors, several namespaces), also after
  simulate-style ``assume`` / ``forget``;
- PodTopologySpread's PreFilter counts and minimums, and its PreScore scores, against the walk
  over every node and pod (node inclusion policies, hostname and zone keys, untolerated taints,
  a nodeSelector on the hostname that defeats node shapes);
- InterPodAffinity's PreFilter counts and the existing pods' anti-affinity terms that match the
  incoming pod, against the walk over every pod.

The naive versions below are the loops the plugins ran before the index (upstream's own shape:
podtopologyspread/filtering.go ``calPreFilterState``, scoring.go ``PreScore``,
interpodaffinity/filtering.go ``getExistingAntiAffinityCounts`` / ``getIncomingAffinityAntiAffinityCounts``).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import node, obj, pod, scheduler

from gpuplane.k8s.objects import Pod
from gpuplane.k8s.selectors import label_selector_matches
from gpuplane.scheduler.framework import Status, unresolvable, unschedulable
from gpuplane.scheduler.plugins.inter_pod_affinity import AffinityState, InterPodAffinity, Term
from gpuplane.scheduler.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    SpreadState,
    _Constraint,
)
from gpuplane.scheduler.plugins.pod_topology_spread import NAME as SPREAD
from gpuplane.scheduler.plugins.selectors_util import NodeInclusion
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.scheduler.spread_scoring import HOSTNAME, MAX_NODE_SCORE, soft_constraints

ZONE = "topology.kubernetes.io/zone"
NAMESPACES = ("default", "team-a", "team-b")
LABEL_KEYS = ("app", "tier", "track")
LABEL_VALUES = ("web", "db", "1", "2")
TOPOLOGY_KEYS = (ZONE, HOSTNAME, "pool")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Bogus")

requirement_st = st.fixed_dictionaries(
    {
        "key": st.sampled_from(LABEL_KEYS),
        "operator": st.sampled_from(OPERATORS),
        "values": st.lists(st.sampled_from(LABEL_VALUES), max_size=2),
    }
)
selector_st = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": st.dictionaries(
            st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=2
        ),
        "matchExpressions": st.lists(requirement_st, max_size=3),
    },
)
labels_st = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3)
# Nodes come mostly from three pool templates, so that many share a shape and differ only in
# their hostname (what a nodeSelector on the hostname must still tell apart).
POOLS = (
    {"zone": "z1", "pool": "gpu", "hostname": True, "taint": True},
    {"zone": "z2", "pool": "gpu", "hostname": True, "taint": True},
    {"zone": "z1", "pool": None, "hostname": True, "taint": False},
)
node_st = st.sampled_from(POOLS) | st.fixed_dictionaries(
    {
        "zone": st.sampled_from((None, "z1", "z2")),
        "pool": st.sampled_from((None, "gpu")),
        "hostname": st.booleans(),
        "taint": st.booleans(),
    }
)
existing_st = st.fixed_dictionaries(
    {
        "node": st.integers(0, 7),
        "ns": st.sampled_from(NAMESPACES),
        "labels": labels_st,
        "terminating": st.booleans(),
        "anti": st.none() | st.tuples(selector_st, st.sampled_from(TOPOLOGY_KEYS)),
    }
)
constraint_st = st.fixed_dictionaries(
    {
        "maxSkew": st.integers(1, 3),
        "topologyKey": st.sampled_from(TOPOLOGY_KEYS),
        "whenUnsatisfiable": st.sampled_from(("DoNotSchedule", "ScheduleAnyway")),
        "labelSelector": selector_st,
        "nodeAffinityPolicy": st.sampled_from(("Honor", "Honor", "Ignore")),
        "nodeTaintsPolicy": st.sampled_from(("Honor", "Ignore")),
        "matchLabelKeys": st.lists(st.sampled_from(LABEL_KEYS), max_size=1),
    },
    optional={"minDomains": st.integers(1, 4)},
)
term_st = st.fixed_dictionaries(
    {
        "labelSelector": selector_st,
        "topologyKey": st.sampled_from(TOPOLOGY_KEYS),
        "namespaces": st.lists(st.sampled_from(NAMESPACES), max_size=2),
        "namespaceSelector": st.none() | st.sampled_from(({}, {"matchLabels": {"team": "a"}})),
    }
)
incoming_st = st.fixed_dictionaries(
    {
        "ns": st.sampled_from(NAMESPACES),
        "labels": labels_st,
        "constraints": st.lists(constraint_st, max_size=3),
        "node_selector": st.sampled_from((None, {"pool": "gpu"}, {HOSTNAME: "n1"}, {HOSTNAME: "n1"})),
        "tolerate": st.booleans(),
        "affinity": st.lists(term_st, max_size=2),
        "anti": st.lists(term_st, max_size=2),
    }
)
cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.lists(node_st, min_size=1, max_size=8),
        "pods": st.lists(existing_st, max_size=30),
        "incoming": incoming_st,
        "churn": st.lists(st.tuples(st.integers(0, 29), st.integers(0, 7)), max_size=4),
    }
)

# For the Filter properties: hard constraints over the pods most existing pods are, so that the
# skew check fails on some nodes and passes on others (random selectors rarely match enough).
crowded_cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.lists(node_st, min_size=1, max_size=8),
        "pods": st.lists(
            existing_st.map(
                lambda p: {
                    **p,
                    "ns": "default",
                    "labels": {"app": "web"} if p["labels"] or p["ns"] != "team-b" else {},
                    "terminating": p["terminating"] and p["ns"] == "team-b",
                    "anti": None,
                }
            ),
            max_size=30,
        ),
        "incoming": incoming_st.map(
            lambda inc: {
                **inc,
                "ns": "default",
                "labels": {"app": "web"},
                "constraints": [
                    {
                        **c,
                        "whenUnsatisfiable": "DoNotSchedule",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                    }
                    for c in inc["constraints"] or [{"topologyKey": HOSTNAME, "maxSkew": 1}]
                ],
            }
        ),
        "churn": st.just([]),
    }
)
filter_cluster_st = cluster_st | crowded_cluster_st


def _strip(selector: dict | None) -> dict | None:
    return None if selector is None else {k: v for k, v in selector.items() if v or k == "matchLabels"}


def build(spec: dict[str, Any]) -> tuple[Scheduler, Pod]:
    docs: list[dict] = [
        obj("Namespace", "team-a", metadata={"labels": {"team": "a"}}),
        obj("Namespace", "team-b", metadata={"labels": {"team": "b"}}),
    ]
    nodes = spec["nodes"]
    for i, n in enumerate(nodes):
        labels = {k: v for k, v in (("pool", n["pool"]), (ZONE, n["zone"])) if v}
        doc = node(
            f"n{i}", labels=labels, taints=[{"key": "gpu", "effect": "NoSchedule"}] if n["taint"] else None
        )
        if not n["hostname"]:
            del doc["metadata"]["labels"][HOSTNAME]
        docs.append(doc)
    for i, p in enumerate(spec["pods"]):
        body: dict[str, Any] = {}
        if p["anti"] is not None:
            selector, key = p["anti"]
            term = {"labelSelector": _strip(selector), "topologyKey": key}
            body["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        doc = pod(f"e{i}", ns=p["ns"], node_name=f"n{p['node'] % len(nodes)}", labels=p["labels"], spec=body)
        if p["terminating"]:
            doc["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        docs.append(doc)
    inc = spec["incoming"]
    body = {
        "topologySpreadConstraints": [
            {**c, "labelSelector": _strip(c["labelSelector"])} for c in inc["constraints"]
        ],
        "tolerations": [{"key": "gpu", "operator": "Exists"}] if inc["tolerate"] else [],
    }
    if inc["node_selector"]:
        body["nodeSelector"] = inc["node_selector"]
    affinity: dict[str, Any] = {}
    for block, terms in (("podAffinity", inc["affinity"]), ("podAntiAffinity", inc["anti"])):
        if terms:
            affinity[block] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {**t, "labelSelector": _strip(t["labelSelector"])} for t in terms
                ]
            }
    if affinity:
        body["affinity"] = affinity
    docs.append(pod("incoming", ns=inc["ns"], labels=inc["labels"], spec=body))
    sched = scheduler(docs)
    incoming = next(p for p in sched.cluster.pending_pods if p.metadata.name == "incoming")
    # simulate's churn: some existing pods leave their node, some arrive on another
    placed = [(p, info.index) for info in sched.index.node_infos for p in info.pods]
    for which, target in spec["churn"]:
        if placed:
            victim, j = placed[which % len(placed)]
            sched.forget(victim, sched.index.node_infos[j].name)
            sched.assume(victim, sched.index.node_infos[target % len(nodes)].name)
    return sched, incoming


# -- naive references ------------------------------------------------------------------------------


def naive_select(sched: Scheduler, namespaces: list[str], selectors: list[Any]) -> Counter[tuple[int, int]]:
    return Counter(
        (id(p), info.index)
        for info in sched.index.node_infos
        for p in info.pods
        if (p.metadata.namespace or "default") in namespaces
        and all(label_selector_matches(s, p.metadata.labels) for s in selectors)
    )


def naive_spread_counts(
    sched: Scheduler, incoming: Pod, constraints: list[_Constraint]
) -> list[Counter[str]]:
    namespace = incoming.metadata.namespace or "default"
    counts: list[Counter[str]] = [Counter() for _ in constraints]
    keys = [c.key for c in constraints]
    for info in sched.index.node_infos:
        labels = info.labels
        if any(k not in labels for k in keys):
            continue
        inclusion = NodeInclusion(incoming, info.node)
        for i, c in enumerate(constraints):
            if not inclusion.admits(c.affinity_honor, c.taints_honor):
                continue
            counts[i][labels[c.key]] += sum(
                1
                for p in info.pods
                if (p.metadata.namespace or "default") == namespace
                and p.metadata.deletion_timestamp is None
                and c.matches(p)
            )
    return counts


def naive_spread_scores(sched: Scheduler, incoming: Pod, nodes: list[int]) -> dict[int, int] | None:
    ctx = sched.context(incoming)
    constraints, require_all = soft_constraints(ctx)
    if not constraints:
        return None
    infos = sched.index.node_infos
    namespace = ctx.namespace

    def count(pods: list[Pod], c: Any) -> int:
        return sum(
            1
            for p in pods
            if p.metadata.deletion_timestamp is None
            and (p.metadata.namespace or "default") == namespace
            and c.selector.matches(p.metadata.labels)
        )

    keys = [c.key for c in constraints]
    ignored: set[int] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for j in nodes:
        labels = infos[j].labels
        if require_all and any(k not in labels for k in keys):
            ignored.add(j)
            continue
        for i, c in enumerate(constraints):
            if c.key != HOSTNAME:
                counts[i].setdefault(labels.get(c.key, ""), 0)
    weights = [
        math.log((len(nodes) - len(ignored) if c.key == HOSTNAME else len(counts[i])) + 2)
        for i, c in enumerate(constraints)
    ]
    for info in infos:
        labels = info.labels
        if require_all and any(k not in labels for k in keys):
            continue
        inclusion = NodeInclusion(incoming, info.node)
        for i, c in enumerate(constraints):
            value = labels.get(c.key, "")
            if c.key == HOSTNAME or value not in counts[i]:
                continue
            if inclusion.admits(c.affinity_honor, c.taints_honor):
                counts[i][value] += count(info.pods, c)
    raw: dict[int, int] = {}
    for j in nodes:
        if j in ignored:
            continue
        labels = infos[j].labels
        score = 0.0
        for i, c in enumerate(constraints):
            if c.key in labels:
                cnt = count(infos[j].pods, c) if c.key == HOSTNAME else counts[i][labels[c.key]]
                score += cnt * weights[i] + (c.max_skew - 1)
        raw[j] = math.floor(score + 0.5)
    low, high = min(raw.values(), default=0), max(raw.values(), default=0)
    out = dict.fromkeys(ignored, 0)
    for j, s in raw.items():
        out[j] = MAX_NODE_SCORE if high == 0 else MAX_NODE_SCORE * (high + low - s) // high
    return out


def naive_affinity_counts(
    sched: Scheduler, affinity: list[Term], anti: list[Term]
) -> tuple[Counter, Counter]:
    index = sched.index
    affinity_counts: Counter[tuple[str, str]] = Counter()
    anti_counts: Counter[tuple[str, str]] = Counter()
    for info in index.node_infos:
        labels = info.labels
        for other in info.pods:
            ns_labels = index.namespace_labels(other.metadata.namespace or "default")
            if affinity and all(t.matches(other, ns_labels) for t in affinity):
                for t in affinity:
                    if t.key in labels:
                        affinity_counts[(t.key, labels[t.key])] += 1
            for t in anti:
                if t.key in labels and t.matches(other, ns_labels):
                    anti_counts[(t.key, labels[t.key])] += 1
    return affinity_counts, anti_counts


def naive_existing(sched: Scheduler, incoming: Pod) -> Counter[tuple[str, int, int]]:
    index = sched.index
    ns_labels = index.namespace_labels(incoming.metadata.namespace or "default")
    found: Counter[tuple[str, int, int]] = Counter()
    for info in index.node_infos:
        for other in info.pods:
            affinity = other.spec.affinity
            block = affinity.pod_anti_affinity if affinity is not None else None
            for raw in block.required_during_scheduling_ignored_during_execution if block else ():
                term = Term(raw, other)
                if term.matches(incoming, ns_labels):
                    found[(term.key, info.index, id(other))] += 1
    return found


# -- the equality properties --------------------------------------------------------------------------

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    cluster_st,
    st.lists(st.sampled_from(NAMESPACES), max_size=3),
    st.lists(selector_st, min_size=1, max_size=2),
)
def test_select_equals_naive(spec: dict[str, Any], namespaces: list[str], selectors: list[Any]) -> None:
    sched, _ = build(spec)
    selectors = [_strip(s) for s in selectors]
    found = Counter((id(p), j) for p, j in sched.index.pods.select(namespaces, selectors))
    assert found == naive_select(sched, namespaces, selectors)


@SETTINGS
@given(cluster_st)
def test_spread_prefilter_equals_naive(spec: dict[str, Any]) -> None:
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = PodTopologySpread()
    if not plugin.relevant(ctx):
        return
    plugin.pre_filter(ctx)
    state = ctx.state.require(SpreadState)
    expected = naive_spread_counts(sched, incoming, state.constraints)
    # as dicts: Counter equality ignores zero counts, and a domain with none counts (minDomains)
    assert [dict(c) for c in state.counts] == [dict(c) for c in expected]
    assert state.minimums == [min(c.values()) if c else 0 for c in expected]


def naive_spread_filter(ctx: Any, state: SpreadState, info: Any, removed: list[Pod]) -> Status | None:
    """filtering.go ``Filter`` on one node with ``removed`` taken off it (``RemovePod`` updates the
    domain's count and the critical paths): the removed pods a constraint counts are found by
    walking them, as the plugin did before it kept the matching pods per node."""
    labels = info.labels
    if any(c.key not in labels for c in state.constraints):
        return unresolvable(SPREAD, ERR_REASON_NODE_LABEL_NOT_MATCH)
    for i, c in enumerate(state.constraints):
        counts = state.counts[i]
        value = labels[c.key]
        taken = sum(
            1
            for p in removed
            if (p.metadata.namespace or "default") == ctx.namespace
            and p.metadata.deletion_timestamp is None
            and c.matches(p)
        )
        match_num = counts.get(value, 0) - taken
        minimum = 0 if len(counts) < c.min_domains else state.minimums[i]
        if removed and value in counts:
            minimum = min(minimum, match_num)
        if match_num + (1 if c.self_match else 0) - minimum > c.max_skew:
            return unschedulable(SPREAD, ERR_REASON_CONSTRAINTS_NOT_MATCH)
    return None


@SETTINGS
@given(filter_cluster_st)
def test_spread_filter_nodes_equals_filter_per_node(spec: dict[str, Any]) -> None:
    """``filter_nodes`` (a lookup by topology domain) gives every node the Status ``filter`` gives
    it, grouped in the order of each Status's first node, as the framework's per-node loop
    records them."""
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = PodTopologySpread()
    if not plugin.relevant(ctx):
        return
    plugin.pre_filter(ctx)
    nodes = np.arange(sched.index.num_nodes, dtype=np.int64)
    per_node: dict[Status, list[int]] = {}
    for info in sched.index.node_infos:
        status = plugin.filter(ctx, info)
        if status is not None:
            per_node.setdefault(status, []).append(info.index)
    found = plugin.filter_nodes(ctx, nodes)
    assert [(status, where.tolist()) for where, status in found] == list(per_node.items())


@SETTINGS
@given(filter_cluster_st, st.data())
def test_spread_filter_with_removed_pods_equals_naive(spec: dict[str, Any], data: st.DataObject) -> None:
    """A preemption dry run's Filter (pods removed from the node) counts the removed pods through
    the matching pods kept per node exactly as the walk over the removed pods does."""
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = PodTopologySpread()
    if not plugin.relevant(ctx):
        return
    plugin.pre_filter(ctx)
    state = ctx.state.require(SpreadState)
    info = sched.index.node_infos[data.draw(st.integers(0, sched.index.num_nodes - 1))]
    removed = [p for p in info.pods if data.draw(st.booleans())]
    ctx.removed = {info.index: removed}
    assert plugin.filter(ctx, info) == naive_spread_filter(ctx, state, info, removed)


@SETTINGS
@given(cluster_st, st.data())
def test_spread_scores_equal_naive(spec: dict[str, Any], data: st.DataObject) -> None:
    sched, incoming = build(spec)
    n = sched.index.num_nodes
    nodes = sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1)))
    from gpuplane.scheduler.spread_scoring import topology_spread_scores

    assert topology_spread_scores(sched.context(incoming), nodes) == naive_spread_scores(
        sched, incoming, nodes
    )


@SETTINGS
@given(cluster_st)
def test_inter_pod_affinity_equals_naive(spec: dict[str, Any]) -> None:
    sched, incoming = build(spec)
    ctx = sched.context(incoming)
    plugin = InterPodAffinity()
    expected_existing = naive_existing(sched, incoming)
    if not plugin.relevant(ctx):
        assert not expected_existing
        return
    plugin.pre_filter(ctx)
    state = ctx.state.require(AffinityState)
    assert Counter((k, j, id(owner)) for k, j, owner in state.existing) == expected_existing
    affinity_counts, anti_counts = naive_affinity_counts(sched, state.affinity, state.anti)
    assert dict(state.affinity_counts) == dict(affinity_counts)
    assert dict(state.anti_counts) == dict(anti_counts)


# -- work, counted --------------------------------------------------------------------------------------


def test_spread_prefilter_visits_only_the_matching_pods() -> None:
    """30 nodes in 3 zones, 20 pods per node, half in each of two namespaces, half app0 and half
    app1: five Pending pods spreading over the app0 pods of their namespace check those 150 pods
    once (the answer is remembered until pods change), where the walk over the cluster checked
    all 600 for each of the five."""
    docs: list[dict] = []
    for i in range(30):
        docs.append(node(f"n{i}", labels={ZONE: f"z{i % 3}"}))
        for k in range(20):
            docs.append(
                pod(f"e{i}-{k}", ns=NAMESPACES[k % 2], node_name=f"n{i}", labels={"app": f"app{k // 10}"})
            )
    selector = {
        "matchLabels": {"app": "app0"},
        "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}],
    }
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": selector,
    }
    for p in range(5):
        docs.append(pod(f"p{p}", labels={"app": "app0"}, spec={"topologySpreadConstraints": [constraint]}))
    sched = scheduler(docs)
    for pending in sched.cluster.pending_pods:
        assert sched.evaluate(pending).stage == "schedulable"
    assert sched.index.pods.visited == 150


def test_select_visits_the_narrowest_postings() -> None:
    """The smallest candidate set wins: ``In`` over two values (their postings), ``Exists`` (the
    key's postings), ``DoesNotExist`` / ``NotIn`` (the complement within the namespace); a
    refused requirement or a nil selector visits nothing."""
    docs: list[dict] = [node("n0")]
    for k in range(40):
        labels = {"app": ("web", "db", "cache", "ml")[k % 4]}
        if k % 10 == 0:
            labels["canary"] = "yes"
        docs.append(pod(f"e{k}", node_name="n0", labels=labels))
    index = scheduler(docs).index.pods

    def visits(selector: Any) -> tuple[int, int]:
        index._cache.clear()
        before = index.visited
        found = len(index.select(("default",), (selector,)))
        return index.visited - before, found

    assert visits({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]}) == (
        20,
        20,
    )
    assert visits({"matchExpressions": [{"key": "canary", "operator": "Exists"}]}) == (4, 4)
    both = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "canary", "operator": "Exists"}]}
    assert visits(both) == (4, 2)
    assert visits({"matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]}) == (36, 36)
    assert visits({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}) == (30, 30)
    assert visits({"matchExpressions": [{"key": "app", "operator": "In", "values": []}]}) == (0, 0)
    assert visits({"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}) == (0, 0)
    assert visits(None) == (0, 0)
    assert visits({}) == (40, 40)
    assert index.select(("team-a",), ({},)) == []


def test_a_node_selector_on_the_hostname_is_judged_per_node() -> None:
    """n0 and n1 share a shape (zone z1, no taints), n2 is in z2. A pod whose nodeSelector names
    n1 counts n1's pods toward z1 (``nodeAffinityPolicy: Honor``) although the shape's first
    node, n0, is not eligible: with the shapes deciding, z1 would count nothing."""
    docs = [node("n0", labels={ZONE: "z1"}), node("n1", labels={ZONE: "z1"}), node("n2", labels={ZONE: "z2"})]
    docs += [pod(f"w{k}", node_name="n1", labels={"app": "web"}) for k in range(2)]
    docs += [pod("w9", node_name="n2", labels={"app": "web"})]
    for when in ("DoNotSchedule", "ScheduleAnyway"):
        constraint = {
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
        spec = {"nodeSelector": {HOSTNAME: "n1"}, "topologySpreadConstraints": [constraint]}
        docs.append(pod(f"p-{when}", labels={"app": "web"}, spec=spec))
    sched = scheduler(docs)
    hard, soft = sorted(sched.cluster.pending_pods, key=lambda p: p.metadata.name)
    assert sched.index.shapes.shape_of == [0, 0, 1]
    ctx = sched.context(hard)
    plugin = PodTopologySpread()
    assert plugin.relevant(ctx)
    plugin.pre_filter(ctx)
    assert dict(ctx.state.require(SpreadState).counts[0]) == {"z1": 2}
    from gpuplane.scheduler.spread_scoring import topology_spread_scores

    # Scoring: z1 counts n1's 2 pods, z2 nothing (n2 fails the nodeSelector, so its pod does not
    # count): n1 scores round(2 * log(2 + 2)) = 3, n2 0, normalized to 0 and 100. With the shapes
    # deciding, both zones would count 0 and both nodes score 100.
    scores = topology_spread_scores(sched.context(soft), [1, 2])
    assert scores == naive_spread_scores(sched, soft, [1, 2]) == {1: 0, 2: 100}
