"""why-pending's GPU causes computed per distinct answer over the node index's arrays (issue 14:
``why_pending.resource_causes``, ``node_facts``; taints per static class) equal the walk over
every node name they replaced (``naive_gpu_causes``, the module as it was), on random GPU
clusters: plain, MIG mixed (one or two profiles) and single, time-sliced, MPS and renamed
replicas, CPU-only nodes, in pools that share node shapes; GPU taints and others, nodes short
of cpu as well, nominated pods holding GPUs, amounts beyond int64; Pending pods asking whole
GPUs (one or two containers), MIG slices and shared replicas, with and without tolerations and
priorities. Every pod is explained in turn on one scheduler, so the memos carry over as in a run,
and again from node names alone (an explanation without ``node_ids``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import naive_gpu_causes
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sched_helpers import node, pod, scheduler

from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.why_pending import gpu_causes
from gpuplane.why_pending.explain import scheduler_explanation
from gpuplane.why_pending.model import Explanation
from gpuplane.why_pending.prequeue import prequeue_explanation

GPU = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"
MIGS = ("nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb", "nvidia.com/mig-2g.20gb")
HUGE = "20000000000000000000"  # beyond int64: the index saturates it
TAINTS = {
    "none": [],
    "gpu": [{"key": GPU, "value": "present", "effect": "NoSchedule"}],
    "other": [{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}],
    "train": [{"key": "dedicated", "value": "train", "effect": "NoSchedule"}],
    # the same key and value, another effect: one Status (its reason names no effect), two causes
    "evict": [{"key": "dedicated", "value": "train", "effect": "NoExecute"}],
}

node_st = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(("gpu", "l4", "mig-mixed", "mig-single", "sliced", "mps", "renamed", "cpu")),
        "migs": st.lists(st.sampled_from(MIGS), min_size=1, max_size=2, unique=True),
        "count": st.integers(1, 8),
        "used": st.lists(st.integers(0, 8), min_size=1, max_size=2),
        "pool": st.sampled_from(("a", "b")),
        "taint": st.sampled_from(("none", "none", "gpu", "other", "train", "evict")),
        "small_cpu": st.booleans(),
        "huge": st.integers(0, 9).map(lambda n: n == 0),
        "app": st.booleans(),  # its running pods are the affinity targets of some Pending pods
    }
)
pending_st = st.fixed_dictionaries(
    {
        "resource": st.sampled_from((GPU, GPU, MIGS[0], MIGS[1], SHARED)),
        "count": st.integers(1, 6),
        "split": st.booleans(),
        "cpu": st.sampled_from(("100m", "4")),
        "tolerate": st.booleans(),
        "priority": st.sampled_from((None, 0, 100)),
        "nominated": st.none() | st.integers(0, 7),
        "affinity": st.booleans(),
    }
)


def _node_doc(i: int, n: dict[str, Any]) -> tuple[dict, list[str]]:
    labels = {"pool": n["pool"], "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    if n["pool"] == "b":
        labels["karpenter.sh/nodepool"] = "gpu-b"
    resources = [GPU]
    kind = n["kind"]
    if kind == "l4":
        labels["nvidia.com/gpu.product"] = "NVIDIA-L4"
    elif kind == "mig-mixed":
        labels["nvidia.com/mig.strategy"] = "mixed"
        resources = list(n["migs"])
    elif kind == "mig-single":
        labels["nvidia.com/mig.strategy"] = "single"
    elif kind in ("sliced", "mps", "renamed"):
        labels["nvidia.com/gpu.sharing-strategy"] = "mps" if kind == "mps" else "time-slicing"
        labels["nvidia.com/gpu.replicas"] = "4"
        if kind == "renamed":
            resources = [SHARED]
    extra: dict[str, str] = {}
    if kind == "cpu":
        labels = {"pool": n["pool"]}
        resources = []
    for r in resources:
        extra[r] = HUGE if n["huge"] else str(n["count"])
    doc = node(
        f"n{i}", cpu="2" if n["small_cpu"] else "64", labels=labels, taints=TAINTS[n["taint"]], extra=extra
    )
    return doc, resources


def build(nodes: list[dict[str, Any]], pending: list[dict[str, Any]]) -> list[dict]:
    docs: list[dict] = []
    for i, n in enumerate(nodes):
        doc, resources = _node_doc(i, n)
        docs.append(doc)
        for r, used in zip(resources, n["used"], strict=False):
            used = min(used, n["count"])
            if used:
                labels = {"app": "target"} if n.get("app") else None
                docs.append(
                    pod(f"run{i}-{r[-4:]}", node_name=f"n{i}", resources={r: str(used)}, labels=labels)
                )
    for k, p in enumerate(pending):
        doc = pod(f"p{k}", cpu=p["cpu"], priority=p["priority"], resources={p["resource"]: str(p["count"])})
        if p["split"] and p["count"] > 1:
            main = doc["spec"]["containers"][0]
            side = {
                "name": "side",
                "image": "busybox",
                "resources": {"requests": {p["resource"]: "1"}, "limits": {p["resource"]: "1"}},
            }
            rest = str(p["count"] - 1)
            main["resources"]["requests"][p["resource"]] = rest
            main["resources"]["limits"][p["resource"]] = rest
            doc["spec"]["containers"].append(side)
        if p.get("affinity"):
            term = {
                "labelSelector": {"matchLabels": {"app": "target"}},
                "topologyKey": "kubernetes.io/hostname",
            }
            doc["spec"]["affinity"] = {
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            }
        if p["tolerate"]:
            doc["spec"]["tolerations"] = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
        if p["nominated"] is not None and p["nominated"] < len(nodes):
            doc["status"]["nominatedNodeName"] = f"n{p['nominated']}"
        docs.append(doc)
    return docs


def explain_with(add: Any, sched: Scheduler, p: Any, *, by_name: bool = False) -> Explanation:
    """``explain.explain`` with ``add`` as the causes step (``by_name``: without node indexes)."""
    early = prequeue_explanation(sched, p)
    if early is not None and early.stage != "scheduler":
        add(sched, early)
        return early
    expl = scheduler_explanation(sched, p)
    if by_name:
        expl = replace(expl, node_ids=[])
    if early is not None:
        expl.causes[:0] = early.causes
        expl.fixes[:0] = early.fixes
    add(sched, expl)
    return expl


def outcome(expl: Explanation) -> tuple[Any, ...]:
    return ([(c.kind, c.rank, c.nodes, c.text, c.fix, c.subject) for c in expl.causes], expl.fixes)


def _n(
    kind: str, count: int, used: list[int], migs: tuple[str, ...] = MIGS[:1], **more: Any
) -> dict[str, Any]:
    base = {"pool": "a", "taint": "none", "small_cpu": False, "huge": False}
    return {**base, "kind": kind, "migs": list(migs), "count": count, "used": used, **more}


def _p(resource: str, count: int, **more: Any) -> dict[str, Any]:
    base = {"split": False, "cpu": "100m", "tolerate": False, "priority": None, "nominated": None}
    return {**base, "resource": resource, "count": count, **more}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(node_st, min_size=1, max_size=10), st.lists(pending_st, min_size=1, max_size=4))
# MIG nodes that could serve a whole-GPU ask (the largest free profile offered) beside one that
# could not: the answers come by kind (fits first), each kind in node order.
@example(
    [
        _n("mig-mixed", 4, [0], (MIGS[0], MIGS[1])),
        _n("mig-mixed", 1, [1]),
        _n("mig-mixed", 2, [0], MIGS[1:2]),
    ],
    [_p(GPU, 1)],
)
# Preemption would evict the pods a higher-priority pod's required pod affinity needs.
@example(
    [_n("gpu", 4, [4], app=True), _n("gpu", 4, [3], app=True)], [_p(GPU, 2, priority=100, affinity=True)]
)
# A nominated pod of higher priority holds part of a node's free GPUs, too few to fit anyway.
@example([_n("gpu", 4, [1]), _n("gpu", 4, [4])], [_p(GPU, 4), _p(GPU, 1, priority=100, nominated=0)])
# Fragmentation over whole GPUs and time-sliced replicas; the same on nodes with another effect.
@example(
    [_n("gpu", 4, [2]), _n("gpu", 4, [2]), _n("sliced", 4, [1]), _n("mps", 4, [1], pool="b")],
    [_p(GPU, 4), _p(GPU, 8, split=True)],
)
# A node beyond int64 (tainted away) makes the other nodes' free amounts come from their dicts.
@example([_n("gpu", 4, [0], huge=True, taint="other"), _n("gpu", 4, [3]), _n("sliced", 4, [4])], [_p(GPU, 2)])
@example(
    [_n("gpu", 4, [2], taint="train"), _n("gpu", 4, [2], taint="evict"), _n("l4", 2, [0], taint="evict")],
    [_p(GPU, 1, tolerate=True)],
)
def test_causes_per_answer_equal_the_walk_over_every_node(
    nodes: list[dict[str, Any]], pending: list[dict[str, Any]]
) -> None:
    docs = build(nodes, pending)
    fast, by_name, naive = scheduler(docs), scheduler(docs), scheduler(docs)
    for p in sorted(fast.cluster.pending_pods, key=lambda q: q.metadata.name):
        want = outcome(explain_with(naive_gpu_causes.add_causes, naive, _same(naive, p)))
        assert outcome(explain_with(gpu_causes.add_causes, fast, p)) == want
        assert outcome(explain_with(gpu_causes.add_causes, by_name, _same(by_name, p), by_name=True)) == want


def _same(sched: Scheduler, p: Any) -> Any:
    return next(q for q in sched.cluster.pending_pods if q.key == p.key)


def test_node_facts_are_asked_once_per_shape_however_many_nodes(monkeypatch: Any) -> None:
    """Twelve times the nodes of the same pools ask the same number of per-node questions (a
    node's sharing and model, a class's untolerated taint): the causes' cost follows the node
    shapes, not the nodes (a count of work, not a time)."""
    from gpuplane.why_pending import node_facts

    calls = {"replication": 0, "taint": 0}
    real_replication, real_taint = node_facts.replication, gpu_causes.find_untolerated_taint

    def counted_replication(*args: Any) -> Any:
        calls["replication"] += 1
        return real_replication(*args)

    def counted_taint(*args: Any) -> Any:
        calls["taint"] += 1
        return real_taint(*args)

    monkeypatch.setattr(node_facts, "replication", counted_replication)
    monkeypatch.setattr(gpu_causes, "find_untolerated_taint", counted_taint)
    pools = [
        _n("gpu", 8, [6], taint="gpu"),
        _n("l4", 4, [3]),
        _n("sliced", 4, [4], pool="b"),
        _n("mig-mixed", 7, [7], (MIGS[0], MIGS[1])),
    ]
    pending = [
        _p(GPU, 4),
        _p(GPU, 2, tolerate=True),
        _p(MIGS[0], 1),
        _p(SHARED, 2),
        _p(GPU, 1, tolerate=True),
    ]

    def run(per_pool: int) -> dict[str, int]:
        calls.update(replication=0, taint=0)
        sched = scheduler(build([n for n in pools for _ in range(per_pool)], pending))
        for p in sched.cluster.pending_pods:
            assert explain_with(gpu_causes.add_causes, sched, p).causes
        return dict(calls)

    small = run(2)
    assert small == run(24) and small["replication"] > 0 and small["taint"] > 0
