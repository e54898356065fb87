"""The batch reprieve (``scheduler.reprieve.reprieve_many``: every candidate node at once, numpy)
gives exactly the outcome of reprieving the candidates one by one (``preemption._reprieve_resources``),
on random clusters: CPU, memory and GPU asks, lower pods of several priorities and start times
(ties of every key), PDBs, pods nominated to nodes, full nodes (``Too many pods``), and candidate
limits small enough that the walk spans several batches and stops inside one; amounts too
large for exact int64 arithmetic fall back to the one-by-one walk. Also a count of work: one
batch per ``limit`` candidates walked, each node's lower pods packed once per priority level.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import disruption_budget, node, pod, scheduler

from gpuplane.scheduler import preemption

existing_st = st.fixed_dictionaries(
    {
        "node": st.integers(0, 5),
        "cpu": st.sampled_from(("500m", "1", "2")),
        "memory": st.sampled_from((None, "1Gi", "4Gi")),
        "gpus": st.sampled_from((0, 0, 1, 2)),
        "priority": st.sampled_from((-5, 0, 0, 10, 200)),
        "app": st.sampled_from(("web", "db")),
        "started": st.sampled_from((None, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")),
    }
)
cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.integers(1, 6),
        "max_pods": st.sampled_from((3, 110)),
        "pods": st.lists(existing_st, min_size=6, max_size=30),
        "pdb": st.sampled_from((None, 0, 1)),
        "nominated": st.lists(st.tuples(st.integers(0, 7), st.sampled_from((0, 1))), max_size=2),
        "incoming": st.fixed_dictionaries(
            {
                "cpu": st.sampled_from(("1", "2", "3")),
                "memory": st.sampled_from((None, "2Gi")),
                "gpus": st.sampled_from((0, 1, 2)),
                "priority": st.sampled_from((5, 100)),
            }
        ),
        "limit": st.sampled_from((1, 2, None, None)),
        "huge": st.sampled_from((False, False, False, True)),
    }
)


def build(spec: dict[str, Any]) -> list[dict]:
    n = spec["nodes"]
    docs: list[dict] = [node(f"n{i}", cpu="3", memory="8Gi", gpus=3, pods=spec["max_pods"]) for i in range(n)]
    for i, p in enumerate(spec["pods"]):
        resources = {"memory": p["memory"]} if p["memory"] else None
        existing = pod(
            f"e{i}",
            node_name=f"n{(i + p['node']) % n if p['node'] < 3 else i % n}",
            cpu=p["cpu"],
            gpus=p["gpus"] or None,
            priority=p["priority"],
            labels={"app": p["app"]},
            resources=resources,
        )
        if p["started"]:
            existing["status"]["startTime"] = p["started"]
        docs.append(existing)
    if spec["huge"] and n:
        # an allocatable beyond exact int64 sums: the batch declines, the walk decides
        docs[0]["status"]["allocatable"]["example.com/huge"] = str(2**62)
    if spec["pdb"] is not None:
        docs.append(
            disruption_budget("keep-db", {"matchLabels": {"app": "db"}}, {"disruptionsAllowed": spec["pdb"]})
        )
    for k, (j, gpus) in enumerate(spec["nominated"]):
        nominated = pod(f"nom{k}", cpu="1", gpus=gpus or None, priority=1000)
        nominated["status"]["nominatedNodeName"] = f"n{j % n}"
        docs.append(nominated)
    inc = spec["incoming"]
    resources = {"memory": inc["memory"]} if inc["memory"] else {}
    if spec["huge"]:
        resources["example.com/huge"] = "1"
    docs.append(
        pod(
            "incoming",
            cpu=inc["cpu"],
            gpus=inc["gpus"] or None,
            priority=inc["priority"],
            resources=resources or None,
        )
    )
    return docs


def outcome(docs: list[dict], limit: int | None) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as mp:
        if limit is not None:
            mp.setattr(preemption, "num_candidates", lambda potential: min(limit, potential))
        sched = scheduler(docs)
        incoming = next(p for p in sched.cluster.pending_pods if p.metadata.name == "incoming")
        found = sched.evaluate(incoming)
    got = found.preemption
    if got is None:
        return (found.message,)
    return (
        found.message,
        got.message,
        got.nominated_node,
        [v.metadata.name for v in got.victims],
        got.pdb_violations,
        got.error,
        dict(got.tried),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st)
def test_batch_reprieve_equals_the_one_by_one_walk(spec: dict[str, Any]) -> None:
    docs = build(spec)
    batched = outcome(docs, spec["limit"])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "reprieve_many", lambda *args, **kwargs: None)
        alone = outcome(docs, spec["limit"])
    assert batched == alone


def test_one_batch_per_limit_and_one_pack_per_node_and_level() -> None:
    """Ten full nodes, each with two lower pods; the preemptor fits on any once one goes: with a
    limit of 4 the walk judges one batch of 4 and stops; a second preemptor of the same level
    packs nothing again."""
    docs = [node(f"n{i}", cpu="2") for i in range(10)]
    for i in range(10):
        docs += [pod(f"low{i}-{k}", node_name=f"n{i}", cpu="1", priority=0) for k in range(2)]
    docs += [pod("a", cpu="1", priority=100), pod("b", cpu="1", priority=50)]
    calls = {"batches": 0, "nodes": 0, "packs": 0}
    many, pack = preemption.reprieve_many, preemption.lower_pack

    def counting_many(ctx: Any, nodes: list[int], *args: Any) -> Any:
        calls["batches"] += 1
        calls["nodes"] += len(nodes)
        return many(ctx, nodes, *args)

    def counting_pack(*args: Any) -> Any:
        calls["packs"] += 1
        return pack(*args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(preemption, "num_candidates", lambda potential: min(4, potential))
        mp.setattr(preemption, "reprieve_many", counting_many)
        mp.setattr(preemption, "lower_pack", counting_pack)
        sched = scheduler(docs)
        by_name = {p.metadata.name: p for p in sched.cluster.pending_pods}
        first = sched.evaluate(by_name["a"]).preemption
        assert calls == {"batches": 1, "nodes": 4, "packs": 4}
        second = sched.evaluate(by_name["b"]).preemption
        assert calls == {"batches": 2, "nodes": 8, "packs": 4}
    assert first is not None and second is not None
    assert first.nominated_node == second.nominated_node == "n0"
    assert [v.metadata.name for v in first.victims] == ["low0-1"]
