"""Diagnose on the demo cluster: gpu-fragmentation counts the nodes why-pending counts (only
the GPU short), the article before a number, the HTML label of GPUs not advertised, and
gpu-type-unpinned on a pod pinned through a NodePool label."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplane.diagnose.engine import run_diagnose
from gpuplane.diagnose.rules.enablement import _article
from gpuplane.k8s.cluster import ClusterState
from gpuplane.report.html import render_html
from gpuplane.sources import load_paths

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo.yaml"
pytestmark = pytest.mark.skipif(not DEMO.exists(), reason="demo cluster not built yet")


@pytest.fixture(scope="module")
def result():
    state = ClusterState.from_objects(load_paths([str(DEMO)]).objects)
    return run_diagnose(state, report_data=True)


def _messages(result, rule: str) -> list[str]:
    return [f.message for f in result.findings if f.rule == rule]


def test_fragmentation_uses_the_scheduler_node_set(result) -> None:
    messages = _messages(result, "gpu-fragmentation")
    assert (
        "pod team-nlp/llm-finetune-worker-2 needs 8 nvidia.com/gpu on one node: 9 GPUs +5 time-sliced replicas "
        "on 2 shared nodes are free on the 5 nodes it may use (node-h100-2 4, node-a100-4 3, node-l4-2 3 replicas, "
        "node-a100-3 2, ...), at most 4 on any one"
    ) in messages
    # vit-h-pretrain has no memory shortage anywhere: node-l4-3's free GPU counts for it
    assert (
        "pod team-vision/vit-h-pretrain-86f9g needs 8 nvidia.com/gpu on one node: 9 GPUs +6 time-sliced replicas "
        "on 3 shared nodes are free on the 6 nodes it may use (node-h100-2 4, node-a100-4 3, node-l4-2 3 replicas, "
        "node-a100-3 2, ...), at most 4 on any one"
    ) in messages


def test_article_by_sound() -> None:
    assert [(n, _article(n)) for n in (1, 2, 8, 11, 18, 80, 100, 800, 8000, 11000, 18000, 110)] == [
        (1, "a"),
        (2, "a"),
        (8, "an"),
        (11, "an"),
        (18, "an"),
        (80, "an"),
        (100, "a"),
        (800, "an"),
        (8000, "an"),
        (11000, "an"),
        (18000, "an"),
        (110, "a"),
    ]


def test_html_labels_not_advertised_gpus_by_cause(result) -> None:
    page = render_html(result)
    titles = re.findall(r'class="seg seg-dark"[^>]* title="([^"]*not advertised[^"]*)"', page)
    assert sorted(titles) == [
        "A100-40GB: 8 not advertised (MIG config failed)",
        "L40S: 4 not advertised (device plugin down)",
        "a100-40gb-mig: 8 not advertised (MIG config failed)",
        "l40s: 4 not advertised (device plugin down)",
    ]
    assert "not advertised (MIG config failed; device plugin down)" in page
    assert "A100-40GB: 8 not advertised (device plugin down)" not in page


def test_pod_pinned_by_nodepool_label_is_not_unpinned(result) -> None:
    messages = _messages(result, "gpu-type-unpinned")
    assert not any("whisper-finetune" in m for m in messages), messages
    assert (
        "Pod team-vision/vit-h-pretrain-86f9g does not choose among the cluster's GPU models "
        "(NVIDIA-A100-SXM4-40GB, NVIDIA-H100-80GB-HBM3, NVIDIA-L4, NVIDIA-L40S)"
    ) in messages
    fixes = [f.fix for f in result.findings if f.rule == "gpu-type-unpinned"]
    # The suggested values are the labels the nodes carry: the L4 nodes are time-sliced, so
    # GPU Feature Discovery reads NVIDIA-L4-SHARED there (issue 17 item 3).
    assert all(
        "NVIDIA-A100-SXM4-40GB, NVIDIA-H100-80GB-HBM3, NVIDIA-L4-SHARED, NVIDIA-L40S>" in str(f)
        for f in fixes
    )
