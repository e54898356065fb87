"""DefaultPreemption's fast paths give exactly the answers of the plain walk (issue 14), on random
clusters: lower-priority pods with and without a PDB, pods nominated to nodes, an incoming pod
with topology spread and pod (anti-)affinity, so that the per-node plugins take part.

The plain walk is upstream's shape (defaultpreemption/default_preemption.go ``SelectVictimsOnNode``):
- step one, node by node: remove every lower-priority pod, run the Filter plugins in order (the
  first failing one gives the node's Status);
- the reprieve: put each victim back (PDB-violating ones first, most important first by its
  own ``MoreImportantPod`` key: priority, then start time) and run every plugin again, summing
  the removed pods' requests each time; it stands in for both of gpuplane's reprieves.
What gpuplane does instead: step one plugin by plugin over the node set (NodeResourcesFit on all
nodes at once, the freed requests from ``ClusterIndex.below_priority``; topology spread at once on
the nodes holding no pod it counts, ``FilterPlugin.reprieve_nodes``), and a reprieve that is
arithmetic on the node's free requests and runs a per-node plugin only for a pod it counts
(``FilterPlugin.reprieve_neutral``), memoized across preemptors where no pod is counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import disruption_budget, node, pod, scheduler

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler import preemption
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status
from gpuplane.scheduler.plugins.base import FilterPlugin
from gpuplane.scheduler.plugins.pod_topology_spread import PodTopologySpread
from gpuplane.scheduler.runtime import Framework

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
APPS = ("web", "db", "batch")

existing_st = st.fixed_dictionaries(
    {
        "node": st.integers(0, 5),
        "cpu": st.sampled_from(("500m", "1", "1500m", "2")),
        "priority": st.sampled_from((-5, 0, 0, 10, 200)),
        "app": st.sampled_from(APPS),
        "anti": st.booleans(),
        "started": st.sampled_from((None, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")),
    }
)
incoming_st = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(("500m", "1", "2", "3")),
        "priority": st.sampled_from((10, 100)),
        "spread": st.sampled_from((None, ZONE, HOSTNAME)),
        "max_skew": st.sampled_from((1, 1, 2)),
        "affinity": st.sampled_from((None, "web", "db")),
        "anti": st.sampled_from((None, "web", "batch")),
    }
)
cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.integers(1, 6),
        "pods": st.lists(existing_st, max_size=16),
        "pdb": st.sampled_from((None, 0, 1)),
        "nominated": st.lists(st.tuples(st.integers(0, 5), st.sampled_from(("1", "2"))), max_size=2),
        "incoming": incoming_st,
    }
)


def build(spec: dict[str, Any]) -> tuple[list[dict], int]:
    n = spec["nodes"]
    docs: list[dict] = [node(f"n{i}", cpu="4", labels={ZONE: f"z{i % 2}"}) for i in range(n)]
    for i, p in enumerate(spec["pods"]):
        body: dict[str, Any] = {}
        if p["anti"]:
            term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
            body["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        existing = pod(
            f"e{i}",
            node_name=f"n{p['node'] % n}",
            cpu=p["cpu"],
            priority=p["priority"],
            labels={"app": p["app"]},
            spec=body,
        )
        if p["started"]:
            existing["status"]["startTime"] = p["started"]
        docs.append(existing)
    if spec["pdb"] is not None:
        docs.append(
            disruption_budget("keep-db", {"matchLabels": {"app": "db"}}, {"disruptionsAllowed": spec["pdb"]})
        )
    for k, (j, cpu) in enumerate(spec["nominated"]):
        nominated = pod(f"nom{k}", cpu=cpu, priority=1000)
        nominated["status"]["nominatedNodeName"] = f"n{j % n}"
        docs.append(nominated)
    inc = spec["incoming"]
    body = {}
    if inc["spread"]:
        body["topologySpreadConstraints"] = [
            {
                "maxSkew": inc["max_skew"],
                "topologyKey": inc["spread"],
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    affinity: dict[str, Any] = {}
    for block, app, key in (
        ("podAffinity", inc["affinity"], ZONE),
        ("podAntiAffinity", inc["anti"], HOSTNAME),
    ):
        if app:
            term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
            affinity[block] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    if affinity:
        body["affinity"] = affinity
    docs.append(pod("incoming", cpu=inc["cpu"], priority=inc["priority"], labels={"app": "web"}, spec=body))
    return docs, n


def _first_failure(
    ctx: PodContext, plugins: list[FilterPlugin], info: NodeInfo, removed: list[Pod]
) -> Status | None:
    ctx.removed = {info.index: removed}
    try:
        for plugin in plugins:
            status = (
                preemption._fit_with_nominated(ctx, plugin, info.index, removed, extra)  # type: ignore[arg-type]
                if (extra := _EXTRA.get("now")) is not None
                and bool(extra[:, info.index].any())
                and hasattr(plugin, "filter_vector")
                else plugin.filter(ctx, info)
            )
            if status is not None:
                return status
        return None
    finally:
        ctx.removed = {}


_EXTRA: dict[str, np.ndarray | None] = {}
# The dynamic Filter plugins of the cycle the plain walk is in (set by ``plain_dry_run``).
_DYNAMIC: list[FilterPlugin] = []


def plain_dry_run(
    fw: Framework,
    ctx: PodContext,
    nodes: np.ndarray,
    active: list[FilterPlugin],
    unrecorded: list[int] | None = None,
    extra: np.ndarray | None = None,
) -> dict[int, Status | None]:
    """Step one of ``SelectVictimsOnNode``, one node at a time, requests summed from the pods."""
    _EXTRA["now"] = extra
    _DYNAMIC[:] = [p for p in active if not p.static]
    index = fw.index
    dynamic = [p for p in active if not p.static]
    out: dict[int, Status | None] = {}
    for j in nodes.tolist():
        info = index.node_infos[j]
        lower = [p for p in info.pods if index.priority(p) < ctx.priority]
        out[j] = preemption._NO_VICTIMS_STATUS if not lower else _first_failure(ctx, dynamic, info, lower)
    return out


def plain_reprieve(
    ctx: PodContext, info: NodeInfo, lower: list[Pod], violating: list[Pod], safe: list[Pod]
) -> tuple[list[Pod], int]:
    """The reprieve with every dynamic plugin of the cycle (``_DYNAMIC``) run at each step on
    the pods still removed, each PDB group
    in its own ``MoreImportantPod`` order (priority, then the earlier start; the test's start
    times share one RFC 3339 form, so they compare as text, a pod without one last), victims
    sorted again when both groups were tried, as ``SelectVictimsOnNode`` does."""
    dynamic = list(_DYNAMIC)

    def importance(p: Pod) -> tuple[int, bool, str]:
        return (-ctx.index.priority(p), p.status.start_time is None, p.status.start_time or "")

    removed = list(lower)
    victims: list[Pod] = []
    violations = 0
    for group, is_violating in ((violating, True), (safe, False)):
        for p in sorted(group, key=importance):
            trial = [q for q in removed if q is not p]
            if _first_failure(ctx, dynamic, info, trial) is None:
                removed = trial
            else:
                victims.append(p)
                violations += is_violating
    if violating and safe:
        victims.sort(key=importance)
    return victims, violations


def plain_reprieve_resources(
    ctx: PodContext,
    info: NodeInfo,
    lower: list[Pod],
    violating: list[Pod],
    safe: list[Pod],
    held: tuple[int, ...] = (),
    checks: list[list[FilterPlugin]] | None = None,
) -> tuple[list[Pod], int]:
    """gpuplane's reprieve (resource arithmetic, plus the plugins ``checks`` names for the pods
    some per-node plugin counts) replaced by the plain walk with every dynamic plugin at every
    step, so the oracle covers the victim order and the plugin choice of every path."""
    return plain_reprieve(ctx, info, lower, violating, safe)


def no_batch(*args: Any, **kwargs: Any) -> None:
    """``reprieve.reprieve_many`` declining every batch: each candidate is reprieved on its own,
    by ``_reprieve_resources`` (the plain walk in the oracle)."""
    return None


def outcome(docs: list[dict]) -> tuple[Any, ...]:
    sched = scheduler(docs)
    incoming = next(p for p in sched.cluster.pending_pods if p.metadata.name == "incoming")
    found = sched.evaluate(incoming).preemption
    if found is None:
        return (None,)
    return (
        found.message,
        found.nominated_node,
        [v.metadata.name for v in found.victims],
        found.pdb_violations,
        found.error,
        dict(found.tried),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st)
def test_preemption_fast_paths_equal_the_plain_walk(spec: dict[str, Any]) -> None:
    docs, _ = build(spec)
    fast = outcome(docs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "dry_run", plain_dry_run)
        mp.setattr(preemption, "reprieve_many", no_batch)
        mp.setattr(preemption, "_reprieve_resources", plain_reprieve_resources)
        plain = outcome(docs)
    assert fast == plain


spread_cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.integers(2, 4),
        "pods": st.lists(
            existing_st.map(lambda p: {**p, "priority": min(p["priority"], 10), "anti": False}),
            min_size=4,
            max_size=16,
        ),
        "pdb": st.sampled_from((None, 0, 1)),
        "nominated": st.lists(st.tuples(st.integers(0, 5), st.sampled_from(("1", "2"))), max_size=1),
        "incoming": incoming_st.map(
            lambda inc: {**inc, "spread": inc["spread"] or HOSTNAME, "priority": 100, "affinity": None}
        ),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spread_cluster_st)
def test_preemption_with_a_spread_equals_the_plain_walk(spec: dict[str, Any]) -> None:
    """The same on clusters where the preemptor always has a topology spread and every existing
    pod is a potential victim: the nodes the constraint counts (``reprieve_nodes``) and the
    others take different reprieve paths side by side."""
    docs, _ = build(spec)
    fast = outcome(docs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "dry_run", plain_dry_run)
        mp.setattr(preemption, "reprieve_many", no_batch)
        mp.setattr(preemption, "_reprieve_resources", plain_reprieve_resources)
        plain = outcome(docs)
    assert fast == plain


def test_a_counted_victim_is_reprieved_only_when_every_plugin_still_passes() -> None:
    """The reprieve checks a pod the spread constraint counts with every plugin, the others by
    their resources alone, and asks the constraint about the pods of a node only where it counts
    one (``reprieve_nodes``). n0 runs web-low (counted), db-low and batch-low; n1 two db pods; both
    are full. The incoming web pod (hostname spread, maxSkew 1) fits on either once the lower
    pods are gone. Put back on n0, web-low would make n0's count 1 against n1's 0 (skew 2): it
    stays the victim, db-low and batch-low fit back, so n0 costs one victim of priority 0; n1
    too (db-b), and the first node wins the tie. Checking web-low by resources only would have
    kept it and evicted db-low and batch-low instead, sending the pod to n1."""
    docs = [
        node("n0", cpu="4", labels={ZONE: "z0"}),
        node("n1", cpu="4", labels={ZONE: "z0"}),
        pod("web-low", node_name="n0", cpu="2", priority=0, labels={"app": "web"}),
        pod("db-low", node_name="n0", cpu="1", priority=0, labels={"app": "db"}),
        pod("batch-low", node_name="n0", cpu="1", priority=-5, labels={"app": "batch"}),
        pod("db-a", node_name="n1", cpu="2", priority=0, labels={"app": "db"}),
        pod("db-b", node_name="n1", cpu="2", priority=0, labels={"app": "db"}),
    ]
    spread = {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    docs.append(
        pod(
            "incoming",
            cpu="2",
            priority=100,
            labels={"app": "web"},
            spec={"topologySpreadConstraints": [spread]},
        )
    )
    checked: list[tuple[str, bool]] = []
    original = PodTopologySpread.reprieve_neutral

    def recording(self: PodTopologySpread, ctx: PodContext, p: Pod) -> bool:
        answer = original(self, ctx, p)
        checked.append((p.metadata.name, answer))
        return answer

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PodTopologySpread, "reprieve_neutral", recording)
        result = outcome(docs)
    # most important first, equal priorities in node order; n1 holds no counted pod
    assert checked == [("web-low", False), ("db-low", True), ("batch-low", True)]
    assert result[1:4] == ("n0", ["web-low"], 0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "dry_run", plain_dry_run)
        mp.setattr(preemption, "reprieve_many", no_batch)
        mp.setattr(preemption, "_reprieve_resources", plain_reprieve_resources)
        assert outcome(docs) == result


def test_a_node_without_counted_victims_is_reprieved_on_resources_alone() -> None:
    """A preemptor with a topology spread whose selector counts none of a node's lower pods gets
    the resource-only reprieve there (no Filter plugin run pod by pod, no node walked on its
    own: the three candidates in one batch), as does a replica without the constraint; the
    nodes' packed lower pods are shared (built once, for the first)."""
    docs = [node(f"n{i}", cpu="4", labels={ZONE: f"z{i % 2}"}) for i in range(3)]
    for i in range(3):
        for k in range(4):
            docs.append(pod(f"b{i}-{k}", node_name=f"n{i}", cpu="1", priority=0, labels={"app": "batch"}))
    spread = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    docs.append(
        pod(
            "spread",
            cpu="2",
            priority=100,
            labels={"app": "web"},
            spec={"topologySpreadConstraints": [spread]},
        )
    )
    docs.append(pod("plain", cpu="2", priority=100, labels={"app": "web"}))
    sched = scheduler(docs)
    by_name = {p.metadata.name: p for p in sched.cluster.pending_pods}
    calls = {"filter_node": 0, "resources": 0, "batched": 0, "packed": 0}
    filter_node, reprieve_resources = preemption._filter_node, preemption._reprieve_resources
    reprieve_many, lower_pack = preemption.reprieve_many, preemption.lower_pack

    def counting_filter_node(*args: Any, **kwargs: Any) -> Status | None:
        calls["filter_node"] += 1
        return filter_node(*args, **kwargs)

    def counting_resources(*args: Any, **kwargs: Any) -> tuple[list[Pod], int]:
        calls["resources"] += 1
        return reprieve_resources(*args, **kwargs)

    def counting_many(ctx: PodContext, nodes: list[int], *args: Any) -> Any:
        calls["batched"] += len(nodes)
        return reprieve_many(ctx, nodes, *args)

    def counting_pack(*args: Any) -> Any:
        calls["packed"] += 1
        return lower_pack(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "_filter_node", counting_filter_node)
        mp.setattr(preemption, "_reprieve_resources", counting_resources)
        mp.setattr(preemption, "reprieve_many", counting_many)
        mp.setattr(preemption, "lower_pack", counting_pack)
        first = sched.evaluate(by_name["spread"]).preemption
        assert calls == {"filter_node": 0, "resources": 0, "batched": 3, "packed": 3}
        second = sched.evaluate(by_name["plain"]).preemption
        assert calls == {"filter_node": 0, "resources": 0, "batched": 6, "packed": 3}
    assert first is not None and second is not None
    assert first.nominated_node == second.nominated_node == "n0"
    assert [v.metadata.name for v in first.victims] == [
        "b0-2",
        "b0-3",
    ]  # the first pods in node order are put back
