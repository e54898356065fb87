"""DefaultPreemption semantics (default_preemption.go, preemption.go): priorities from
PriorityClasses, preemptionPolicy Never, strictly-lower victims, PDBs, unhelpful nodes."""

from __future__ import annotations

from sched_helpers import disruption_budget, message, node, obj, pod, scheduler

from gpuplane.why_pending.explain import explain


def pc(name: str, value: int, never: bool = False) -> dict:
    extra = {"preemptionPolicy": "Never"} if never else {}
    return obj("PriorityClass", name, "scheduling.k8s.io/v1", value=value, **extra)


def test_preemption_policy_never() -> None:
    docs = [
        node("a", gpus=2),
        node("b", gpus=2),
        pc("batch", 100, never=True),
        pod("p", gpus=4, spec={"priorityClassName": "batch"}),
    ]
    assert message(docs, version="1.33") == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: not eligible due to preemptionPolicy=Never."
    )


def test_priority_class_resolution_and_success() -> None:
    docs = [
        node("a", gpus=8),
        node("b", gpus=8),
        pc("high", 1000),
        pc("low", 10),
        pod("l1", node_name="a", gpus=4, spec={"priorityClassName": "low"}),
        pod("l2", node_name="a", gpus=4, spec={"priorityClassName": "low"}),
        pod("h1", node_name="b", gpus=8, spec={"priorityClassName": "high"}),
        pod("p", gpus=4, spec={"priorityClassName": "high"}),
    ]
    s = scheduler(docs)
    expl = explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == "p"))
    # Filter fails on both; preemption finds node a (one low victim suffices): no clause.
    assert expl.message == "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
    assert expl.preemption is not None and expl.preemption.nominated_node == "a"
    assert len(expl.preemption.victims) == 1


def test_pdb_protected_victim_is_reprieved_first() -> None:
    pdb = disruption_budget("keep", {"matchLabels": {"app": "keep"}}, {"disruptionsAllowed": 0})
    docs = [
        node("a", gpus=8),
        pdb,
        pod("guarded", node_name="a", gpus=4, priority=1, labels={"app": "keep"}),
        pod("plain", node_name="a", gpus=4, priority=1),
        pod("p", gpus=4, priority=100),
    ]
    s = scheduler(docs)
    expl = explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == "p"))
    assert expl.preemption is not None
    assert [v.metadata.name for v in expl.preemption.victims] == ["plain"]
    assert expl.preemption.pdb_violations == 0


def test_multi_node_mixed_statuses() -> None:
    taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    docs = [node(f"g{i}", gpus=8) for i in range(3)] + [
        node("t", gpus=8, taints=taint),
        node("cpu"),
        pod("big", node_name="g0", gpus=8, priority=1000),
        pod("med", node_name="g1", gpus=6, priority=0),
        pod("m2", node_name="g2", gpus=6, priority=2000),
        pod("p", gpus=4, priority=500),
    ]
    s = scheduler(docs, version="1.33")
    expl = explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == "p"))
    assert expl.message == (
        "0/5 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, "
        "4 Insufficient nvidia.com/gpu."
    )
    assert expl.preemption is not None and expl.preemption.nominated_node == "g1"


def test_no_victims_and_not_helpful_mix() -> None:
    docs = [
        node("a", gpus=8),
        node("b", gpus=8, labels={"pool": "x"}),
        pod("h", node_name="a", gpus=8, priority=100),
        pod("h2", node_name="b", gpus=8, priority=100),
        pod("p", gpus=1, priority=100, spec={"nodeSelector": {"kubernetes.io/hostname": "a"}}),
    ]
    assert message(docs) == (
        "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )
