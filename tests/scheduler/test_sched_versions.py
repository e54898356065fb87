"""Per-release switches verified against upstream CHANGELOGs (versions.py): the v1.34.2
taint cherry-pick, how PreFilterResult-cut nodes are recorded (v1.28-29 / v1.30-31 / v1.32+),
and the DefaultPreemption candidate limit."""

from __future__ import annotations

import pytest
from sched_helpers import message, node, pod, scheduler

from gpuplane.scheduler.preemption import num_candidates
from gpuplane.scheduler.versions import (
    ABSENT_FILTERED,
    ABSENT_PLUGINS,
    ABSENT_UNRECORDED,
    parse_version,
    resolve_wording,
    wording_for,
)
from gpuplane.why_pending.explain import explain

TAINTED = [
    node("a", gpus=8),
    node("b", gpus=8, taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    pod("busy", node_name="a", gpus=8, priority=10),
    pod("p", gpus=4, priority=10),
]


def test_parse_version_keeps_patch() -> None:
    assert parse_version("v1.34.2-eks-1234") == (34, 2)
    assert parse_version("1.31") == (31, None)
    assert parse_version("2.1") is None
    assert resolve_wording("1.34.2", None).label == "1.34.2"
    assert resolve_wording(None, "1.34").label == "1.34"


@pytest.mark.parametrize(
    ("version", "taint"),
    [
        ("1.34", "untolerated taint {dedicated: gpu}"),
        ("1.34.1", "untolerated taint {dedicated: gpu}"),
        ("1.34.2", "untolerated taint(s)"),
        ("1.33.9", "untolerated taint {dedicated: gpu}"),
    ],
)
def test_taint_text_follows_cherry_pick_135023(version: str, taint: str) -> None:
    assert message(TAINTED, version=version).startswith(
        f"0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had {taint}. "
    )


def test_absent_mode_per_minor() -> None:
    assert [wording_for(m).prefilter_absent for m in (28, 29, 30, 31, 32, 36)] == [
        ABSENT_UNRECORDED,
        ABSENT_UNRECORDED,
        ABSENT_FILTERED,
        ABSENT_FILTERED,
        ABSENT_PLUGINS,
        ABSENT_PLUGINS,
    ]


NAME_AFFINITY = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
}


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        # v1.28-29: cut nodes have no status: not counted, and preemption dry-runs them
        # (NodeAffinity's Filter then rejects b; a and c hold no lower-priority pod).
        (
            "1.29",
            "0/3 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: "
            "1 node(s) didn't match Pod's node affinity/selector, 2 No preemption victims found for incoming pod..",
        ),
        (
            "1.31",
            "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node is filtered out by the prefilter "
            "result. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling.",
        ),
        (
            "1.32",
            "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't satisfy plugin(s) "
            "[NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming "
            "pod, 2 Preemption is not helpful for scheduling.",
        ),
    ],
)
def test_prefilter_cut_nodes_per_version(version: str, expected: str) -> None:
    docs = [
        node("a", gpus=8),
        node("b", gpus=8),
        node("c", gpus=8),
        pod("busy", node_name="a", gpus=8, priority=10),
        pod("low", node_name="b", gpus=1, priority=0),
        pod("p", gpus=8, priority=10, spec=NAME_AFFINITY),
    ]
    assert message(docs, version=version) == expected


def test_candidate_limit_mirrors_default_preemption_args() -> None:
    assert num_candidates(50) == 50
    assert num_candidates(500) == 100
    assert num_candidates(5000) == 500


def test_assume_invalidates_preemption_memo() -> None:
    docs = [
        node("a", gpus=8),
        node("b", gpus=8),
        pod("l1", node_name="a", gpus=8, priority=0),
        pod("l2", node_name="b", gpus=4, priority=0),
        pod("p", gpus=8, priority=100),
    ]
    s = scheduler(docs)
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == "p")
    first = explain(s, target).preemption
    assert first is not None and first.nominated_node == "a"
    extra = next(p for p in s.cluster.pods if p.metadata.name == "l2")
    s.assume(extra, "a")
    again = explain(s, target).preemption
    assert (
        again is not None
        and [v.metadata.name for v in again.victims] == ["l2"]
        and again.nominated_node == "b"
    )


@pytest.mark.parametrize(
    ("minor", "reason"),
    [
        (32, "node(s) had volume node affinity conflict"),
        (33, "node(s) didn't match PersistentVolume's node affinity"),
    ],
)
def test_volume_conflict_text_changes_in_133_pr_129887(minor: int, reason: str) -> None:
    # CHANGELOG-1.33.md, v1.33.0-alpha.3: PR #129887 changed the VolumeBinding reason.
    assert wording_for(minor).volume_conflict_reason == reason


def test_sidecars_on_from_129_pr_121579() -> None:
    # CHANGELOG-1.29.md, v1.29.0-alpha.3: SidecarContainers beta, enabled by default.
    assert [wording_for(m).sidecars_enabled for m in (28, 29, 36)] == [False, True, True]


def test_postfilter_double_period_until_1_29() -> None:
    """#117588 dropped the extra period after the PostFilter text; its author: "resolved in 1.30"."""
    assert [wording_for(m).postfilter_double_period for m in (28, 29, 30, 36)] == [True, True, False, False]
