"""FitError text, PreFilter/PostFilter framing and per-version wording (pkg/scheduler/framework/types.go)."""

from __future__ import annotations

from collections import Counter

import pytest
from sched_helpers import message, node, pod

from gpuplane.scheduler.framework import build_fit_message
from gpuplane.scheduler.versions import NEWEST_MINOR, parse_minor, resolve_wording, wording_for


def test_histogram_sorts_like_go_sort_strings() -> None:
    hist = Counter({"Insufficient nvidia.com/gpu": 10, "node(s) had untolerated taint(s)": 2})
    assert build_fit_message(12, "", hist) == (
        "0/12 nodes are available: 10 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)."
    )


def test_prefilter_message_replaces_histogram() -> None:
    assert build_fit_message(3, 'persistentvolumeclaim "data" not found', Counter({"x": 3})) == (
        '0/3 nodes are available: persistentvolumeclaim "data" not found.'
    )


def test_version_resolution_order() -> None:
    assert resolve_wording("1.29", "1.35").minor == 29
    assert resolve_wording(None, "1.35").minor == 35
    assert resolve_wording(None, None).minor == NEWEST_MINOR
    assert parse_minor("v1.30.2-eks-1234") == 30
    with pytest.raises(ValueError):
        resolve_wording("banana", None)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # before v1.30 the PostFilter text got the histogram's trailing period too (versions.py)
        (
            "1.28",
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {dedicated: gpu}. "
            "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling..",
        ),
        (
            "1.34",
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {dedicated: gpu}. "
            "no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
        ),
        (
            "1.35",
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint(s). "
            "no new claims to deallocate, preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
        ),
    ],
)
def test_taint_and_dra_wording_per_version(version: str, expected: str) -> None:
    docs = [
        node("a", gpus=8),
        node("b", gpus=8, taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
        pod("busy", node_name="a", gpus=8, priority=10),
        pod("p", gpus=4, priority=10),
    ]
    assert message(docs, version=version) == expected


def test_request_over_allocatable_is_unresolvable_from_1_34() -> None:
    docs = [node("a", gpus=4), pod("low", node_name="a", gpus=1, priority=0), pod("p", gpus=8, priority=100)]
    # 1.33: Unschedulable, so preemption dry-runs the node and the filter reason stays.
    assert message(docs, version="1.33") == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    )
    # 1.34 (PR #131345): UnschedulableAndUnresolvable, preemption is not helpful.
    assert message(docs, version="1.34") == (
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_no_nodes() -> None:
    assert message([pod("p")]) == "no nodes available to schedule pods"


def test_every_supported_minor_has_wording() -> None:
    for minor in range(28, NEWEST_MINOR + 1):
        w = wording_for(minor)
        assert w.label == f"1.{minor}"
    assert wording_for(40).minor == NEWEST_MINOR
