"""``ClusterIndex.below_priority`` (what DefaultPreemption's step one removes from each node) equals
the plain sum over the pods below the preemptor's priority, on random clusters, whichever side of
the priority it sums, and after pods are added to and removed from nodes (simulate's
``assume`` / ``forget``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sched_helpers import node, pod, scheduler

from gpuplane.scheduler.index import ClusterIndex

PRIORITIES = (-5, 0, 10, 100, 1000)

pod_st = st.fixed_dictionaries(
    {
        "node": st.integers(0, 4),
        "cpu": st.sampled_from(("100m", "1", "2500m")),
        "gpus": st.sampled_from((None, 1, 2)),
        "priority": st.sampled_from(PRIORITIES),
    }
)
cluster_st = st.fixed_dictionaries(
    {
        "nodes": st.integers(1, 5),
        "pods": st.lists(pod_st, max_size=24),
        "added": st.lists(pod_st, max_size=3),
        "removed": st.lists(st.integers(0, 23), max_size=3),
        "asks": st.lists(st.sampled_from((-10, -5, 0, 5, 10, 100, 1000, 5000)), min_size=1, max_size=4),
    }
)


def _pod(name: str, p: dict[str, Any], n: int, *, placed: bool) -> dict:
    return pod(
        name,
        node_name=f"n{p['node'] % n}" if placed else None,
        cpu=p["cpu"],
        gpus=p["gpus"],
        priority=p["priority"],
    )


def naive(index: ClusterIndex, priority: int) -> tuple[np.ndarray, np.ndarray]:
    freed = np.zeros_like(index.req)
    count = np.zeros(index.num_nodes, dtype=np.int64)
    pods_row = index.resource_index["pods"]
    for info in index.node_infos:
        for p in info.pods:
            if index.priority(p) < priority:
                for name, amount in index.pod_requests(p).items():
                    freed[index.resource_index[name], info.index] += amount
                freed[pods_row, info.index] += 1
                count[info.index] += 1
    return freed, count


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster_st)
def test_below_priority_equals_the_plain_sum(spec: dict[str, Any]) -> None:
    n = spec["nodes"]
    docs = [node(f"n{i}", cpu="16", gpus=4) for i in range(n)]
    docs += [_pod(f"p{i}", p, n, placed=True) for i, p in enumerate(spec["pods"])]
    docs += [_pod(f"a{i}", p, n, placed=False) for i, p in enumerate(spec["added"])]
    sched = scheduler(docs)
    index = sched.index
    for ask in spec["asks"]:
        level, freed, count = index.below_priority(ask)
        want_freed, want_count = naive(index, ask)
        assert np.array_equal(freed, want_freed) and np.array_equal(count, want_count)
        assert level == len(
            {index.priority(p) for i in index.node_infos for p in i.pods if index.priority(p) < ask}
        )
    # simulate changes the pods on nodes: the memo follows
    pending = {p.metadata.name: p for p in sched.cluster.pending_pods}
    for i, p in enumerate(spec["added"]):
        index.add_pod(p["node"] % n, pending[f"a{i}"])
    placed = [p for info in index.node_infos for p in info.pods]
    for k in spec["removed"]:
        if placed:
            victim = placed.pop(k % len(placed))
            j = next(i.index for i in index.node_infos if any(q is victim for q in i.pods))
            assert index.remove_pod(j, victim)
    for ask in spec["asks"]:
        _, freed, count = index.below_priority(ask)
        want_freed, want_count = naive(index, ask)
        assert np.array_equal(freed, want_freed) and np.array_equal(count, want_count)
