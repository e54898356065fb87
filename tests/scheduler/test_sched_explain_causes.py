"""Causes why-pending writes: nominated pods holding room, where taints come from.

Regression tests for expert-review findings: free GPUs held by a nominated pod of higher
priority were called "fragmentation"; every NoSchedule taint was attributed to the GPU
Operator (which applies none)."""

from __future__ import annotations

from sched_helpers import node, obj, pod, scheduler

from gpuplane.why_pending.explain import explain


def _explain(docs: list[dict], name: str):
    s = scheduler(docs)
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == name)
    return explain(s, target)


def _nominated(name: str, gpus: int, priority: int, on: str) -> dict:
    body = pod(name, gpus=gpus, priority=priority)
    body["status"]["nominatedNodeName"] = on
    return body


def test_nominated_higher_priority_pod_holds_the_free_gpus() -> None:
    # RunFilterPluginsWithNominatedPods (reference/scheduling.md §3.6): nom's 8 GPUs count
    # as already on n1 when `want` (priority 0 <= 1000) is filtered.
    expl = _explain(
        [node("n1", gpus=8), _nominated("nom", 8, 1000, "n1"), pod("want", gpus=4, priority=0)], "want"
    )
    assert expl.message == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
    assert expl.cause_texts()[0] == (
        "the 8 free nvidia.com/gpu on node n1 are reserved for the nominated pod default/nom (priority 1000, "
        "8 nvidia.com/gpu), of priority >= the pod's (0): kube-scheduler counts pods nominated to a node "
        "(status.nominatedNodeName, set by preemption) as already running there when filtering "
        "(RunFilterPluginsWithNominatedPods): that leaves at most 0 for this pod, which asks for 4"
    )
    assert expl.fixes[0] == (
        "wait for default/nom to bind to n1 (its next scheduling attempt), then for 4 nvidia.com/gpu to free up; "
        "or add GPU nodes (or let the autoscaler) so the pod has room of its own"
    )
    assert not any("fragmentation" in c for c in expl.cause_texts())


def test_nominated_lower_priority_pod_holds_nothing() -> None:
    # A nominated pod of lower priority is not counted: the pod fits.
    expl = _explain(
        [node("n1", gpus=8), _nominated("nom", 8, 0, "n1"), pod("want", gpus=4, priority=1000)], "want"
    )
    assert expl.stage == "schedulable"


def test_partial_hold_is_counted_in_the_shortage() -> None:
    # 8 GPUs, 2 in use, nom holds 4: 2 left for a pod asking 4 (node free 6 >= 4: the hold explains it).
    # Running pods share the pod's priority, so preemption has no victims to offer.
    docs = [
        node("n1", gpus=8),
        pod("run", node_name="n1", gpus=2, priority=10),
        _nominated("nom", 4, 10, "n1"),
        pod("want", gpus=4, priority=10),
        node("n2", gpus=8),
        pod("full", node_name="n2", gpus=7, priority=10),
    ]
    expl = _explain(docs, "want")
    assert expl.cause_texts()[0].startswith(
        "the 6 free nvidia.com/gpu on node n1 are reserved for the nominated pod "
        "default/nom (priority 10, 4 nvidia.com/gpu)"
    )
    assert expl.cause_texts()[0].endswith("that leaves at most 2 for this pod, which asks for 4")
    assert expl.cause_texts()[1] == (
        "only 1 of 8 nvidia.com/gpu is free on the 1 node(s) that pass the other checks "
        "(1 node(s) with 1 free); the pod asks for 4 on one node"
    )


def test_fragmentation_only_when_no_node_has_enough() -> None:
    docs = [
        node("a", gpus=8),
        pod("ra", node_name="a", gpus=6),
        node("b", gpus=8),
        pod("rb", node_name="b", gpus=6),
        pod("want", gpus=4),
    ]
    expl = _explain(docs, "want")
    assert expl.cause_texts()[0] == (
        "the 2 node(s) with nvidia.com/gpu that pass the other checks have 2 node(s) with 2 free; the pod asks for "
        "4 on one node: fragmentation (4 free in total, at most 2 on any node)"
    )


# A time-sliced L4 as GFD labels it (k8s-device-plugin internal/lm/resource.go): 1 board, 4 replicas
# advertised as nvidia.com/gpu (renameByDefault: false), product suffixed -SHARED.
L4_SHARED = {
    "nvidia.com/gpu.product": "NVIDIA-L4-SHARED",
    "nvidia.com/gpu.replicas": "4",
    "nvidia.com/gpu.sharing-strategy": "time-slicing",
}


def test_fragmentation_counts_time_sliced_replicas_apart_from_gpus() -> None:
    docs = [
        node("a", gpus=8, labels={"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"}),
        pod("ra", node_name="a", gpus=6),
        node("b", gpus=8),
        pod("rb", node_name="b", gpus=7),
        node("l4-1", gpus=4, labels=L4_SHARED),
        pod("r1", node_name="l4-1", gpus=1),
        node("l4-2", gpus=4, labels=L4_SHARED),
        pod("r2", node_name="l4-2", gpus=2),
        pod("want", gpus=4),
    ]
    expl = _explain(docs, "want")
    assert expl.cause_texts()[0] == (
        "the 4 node(s) with nvidia.com/gpu that pass the other checks have 1 time-sliced L4 node(s) with "
        "3 free replicas, 1 A100-40GB node(s) with 2 free, 1 time-sliced L4 node(s) with 2 free replicas, "
        "1 node(s) with 1 free; the pod asks for 4 on one node: fragmentation (3 free GPUs +5 time-sliced "
        "replicas on 2 shared nodes, at most 3 on any node)"
    )


def test_shortage_counts_mps_replicas_apart_from_gpus() -> None:
    mps = {"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "mps"}
    docs = [
        node("a", gpus=8),
        pod("ra", node_name="a", gpus=7),
        node("t4", gpus=4, labels=mps),
        pod("rt", node_name="t4", gpus=3),
        pod("want", gpus=4),
    ]
    expl = _explain(docs, "want")
    assert expl.cause_texts()[0] == (
        "only 2 of 12 nvidia.com/gpu are free on the 2 node(s) that pass the other checks (1 node(s) with 1 free, "
        "1 MPS node(s) with 1 free replica), that is 1 free GPU +1 MPS replica on 1 shared node; the pod asks "
        "for 4 on one node"
    )


def test_all_in_use_counts_time_sliced_replicas_apart_from_gpus() -> None:
    docs = [
        node("a", gpus=2),
        pod("ra", node_name="a", gpus=2),
        node("l4-1", gpus=4, labels=L4_SHARED),
        pod("r1", node_name="l4-1", gpus=4),
        pod("want", gpus=1),
    ]
    expl = _explain(docs, "want")
    assert expl.cause_texts()[0] == (
        "all nvidia.com/gpu are in use on the 2 node(s) that pass the other checks: 0 free of 2 GPUs "
        "+4 time-sliced replicas on 1 shared node (1 node(s) with 0 free, 1 time-sliced L4 node(s) with "
        "0 free replicas); the pod asks for 1"
    )


def test_non_gpu_taint_is_named_without_a_made_up_origin() -> None:
    docs = [
        node("a", gpus=8, taints=[{"key": "dedicated", "value": "infer", "effect": "NoSchedule"}]),
        pod("p", gpus=1),
    ]
    expl = _explain(docs, "p")
    assert expl.cause_texts() == [
        "1 node(s) carry the taint dedicated=infer:NoSchedule and the pod does not tolerate it: add this toleration "
        "if the pod belongs there"
    ]
    assert expl.fixes == [
        'tolerations:\n- key: dedicated\n  operator: Equal\n  value: "infer"\n  effect: NoSchedule'
    ]
    assert "GPU Operator" not in expl.cause_texts()[0]


def test_gpu_taint_origins() -> None:
    taint = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    docs = [
        node("k", gpus=8, labels={"karpenter.sh/nodepool": "gpu"}, taints=[taint]),
        obj(
            "NodePool", "gpu", api_version="karpenter.sh/v1", spec={"template": {"spec": {"taints": [taint]}}}
        ),
        node(
            "g",
            gpus=8,
            labels={"cloud.google.com/gke-accelerator": "nvidia-l4"},
            taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        ),
        node("c", gpus=8, taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]),
        pod("p", gpus=1),
    ]
    expl = _explain(docs, "p")
    assert expl.cause_texts() == [
        "1 GPU node(s) carry the taint nvidia.com/gpu:NoSchedule (set by Karpenter NodePool gpu, "
        "spec.template.spec.taints) and the pod does not tolerate it: add this toleration",
        "1 GPU node(s) carry the taint nvidia.com/gpu=present:NoSchedule (GKE taints GPU node pools with "
        "nvidia.com/gpu when the cluster also has non-GPU pools) and the pod does not tolerate it: add this toleration",
        "1 GPU node(s) carry the taint nvidia.com/gpu=true:NoSchedule (the usual taint on dedicated GPU nodes: "
        "key = the GPU resource name) and the pod does not tolerate it: add this toleration",
    ]
    assert expl.fixes[0] == (
        "tolerations:\n- key: nvidia.com/gpu\n  operator: Exists\n  effect: NoSchedule\n"
        "# or enable the ExtendedResourceToleration admission plugin: it adds it to pods requesting nvidia.com/gpu"
    )


def test_gpu_taint_keeps_cpu_pods_off_without_a_toleration_fix() -> None:
    docs = [
        node("g", gpus=8, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        pod("p", gpus=None),
    ]
    expl = _explain(docs, "p")
    assert expl.cause_texts() == [
        "1 GPU node(s) carry the taint nvidia.com/gpu:NoSchedule (the usual taint on dedicated GPU nodes: key = the "
        "GPU resource name): it keeps pods that ask for no GPU off GPU nodes, as intended"
    ]
    assert expl.fixes == []
