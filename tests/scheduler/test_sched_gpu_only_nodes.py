"""The GPU capacity / fragmentation causes count exactly the nodes whose only failure is the
GPU shortage, the same in every wording version, and never say "all in use" with some free.

Regression tests for review findings on the demo cluster: node-l4-3 (which also lacks memory)
was counted as room ("all nvidia.com/gpu are in use ...: 1 free of 4"); under 1.36 wording the
NodeResourcesFit verdicts split by status code, which split the causes and the table rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from sched_helpers import node, pod, scheduler

from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.scheduler import Scheduler
from gpuplane.sources import load_paths
from gpuplane.why_pending.explain import explain
from gpuplane.why_pending.gpu_causes import only_short_of

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo.yaml"
demo_only = pytest.mark.skipif(not DEMO.exists(), reason="demo cluster not built yet")

# The demo's L4 pool is time-sliced x4: its free units are replicas, counted apart from GPUs.
WORKER_FRAGMENTATION = (
    "the 8 node(s) with nvidia.com/gpu that pass the other checks have 2 A100-40GB node(s) with 0 free, "
    "1 H100-80GB node(s) with 4 free, 1 A100-40GB node(s) with 3 free, 1 time-sliced L4 node(s) with 3 free "
    "replicas, 1 A100-40GB node(s) with 2 free, 1 time-sliced L4 node(s) with 2 free replicas, "
    "1 H100-80GB node(s) with 0 free; the pod asks for 8 on one node: fragmentation (9 free GPUs "
    "+5 time-sliced replicas on 2 shared nodes, at most 4 on any node)"
)
VIT_FRAGMENTATION = (
    "the 9 node(s) with nvidia.com/gpu that pass the other checks have 2 A100-40GB node(s) with 0 free, "
    "1 H100-80GB node(s) with 4 free, 1 A100-40GB node(s) with 3 free, 1 time-sliced L4 node(s) with 3 free "
    "replicas, 1 A100-40GB node(s) with 2 free, 1 time-sliced L4 node(s) with 2 free replicas, "
    "1 time-sliced L4 node(s) with 1 free replica, 1 H100-80GB node(s) with 0 free; the pod asks for 8 on "
    "one node: fragmentation (9 free GPUs +6 time-sliced replicas on 3 shared nodes, at most 4 on any node)"
)


def _demo(version: str | None) -> Scheduler:
    return Scheduler(ClusterState.from_objects(load_paths([str(DEMO)]).objects), version=version)


def _pod(s: Scheduler, name: str):
    return next(p for p in s.cluster.pending_pods if p.metadata.name == name)


@demo_only
@pytest.mark.parametrize("version", [None, "1.36"])
def test_demo_causes_do_not_depend_on_the_wording_version(version: str | None) -> None:
    s = _demo(version)
    worker = explain(s, _pod(s, "llm-finetune-worker-2"))
    assert WORKER_FRAGMENTATION in worker.cause_texts()
    assert "1 node(s) lack memory: the pod requests 48Gi memory" in worker.cause_texts()
    assert not any("in use" in c for c in worker.cause_texts()), worker.cause_texts()
    assert "node-l4-3" not in only_short_of(worker, "nvidia.com/gpu")
    assert len(only_short_of(worker, "nvidia.com/gpu")) == 13
    # the gang line counts the same nodes
    assert worker.cause_texts()[0].endswith(
        "the other 2 need 8 nvidia.com/gpu each on one node; max free on any node is 4"
    )
    vit = explain(s, _pod(s, "vit-h-pretrain-86f9g"))
    assert VIT_FRAGMENTATION in vit.cause_texts()
    assert not any("in use" in c for c in vit.cause_texts()), vit.cause_texts()


@demo_only
@pytest.mark.parametrize("version", [None, "1.36"])
def test_demo_table_has_one_row_per_plugin_and_reasons(version: str | None) -> None:
    s = _demo(version)
    rows = explain(s, _pod(s, "llm-finetune-worker-2")).table()
    assert [(r["nodes"], r["plugin"], r["reasons"]) for r in rows] == [
        (13, "NodeResourcesFit", ["Insufficient nvidia.com/gpu"]),
        (1, "NodeResourcesFit", ["Insufficient memory", "Insufficient nvidia.com/gpu"]),
    ]
    assert rows[1]["sample"] == ["node-l4-3"]


def test_node_short_of_memory_too_is_no_gpu_room() -> None:
    # n1: 2 GPUs free but too little memory; n2: 1 GPU free. The pod asks 2 GPUs and 16Gi.
    docs = [
        node("n1", gpus=4, memory="8Gi"),
        pod("a", node_name="n1", gpus=2),
        node("n2", gpus=4, memory="64Gi"),
        pod("b", node_name="n2", gpus=3),
        pod("want", gpus=2, resources={"memory": "16Gi"}),
    ]
    s = scheduler(docs)
    expl = explain(s, _pod(s, "want"))
    assert expl.cause_texts() == [
        "1 node(s) lack memory: the pod requests 16Gi memory",
        "only 1 of 4 nvidia.com/gpu is free on the 1 node(s) that pass the other checks (1 node(s) with 1 free); "
        "the pod asks for 2 on one node",
        "preemption cannot help: no pod of lower priority runs on the nodes that lack resources",
    ]


def test_all_in_use_only_when_none_is_free() -> None:
    docs = [node("n1", gpus=4), pod("a", node_name="n1", gpus=4), pod("want", gpus=1)]
    s = scheduler(docs)
    expl = explain(s, _pod(s, "want"))
    assert expl.cause_texts()[0] == (
        "all nvidia.com/gpu are in use on the 1 node(s) that pass the other checks: 0 free of 4 "
        "(1 node(s) with 0 free); the pod asks for 1"
    )
