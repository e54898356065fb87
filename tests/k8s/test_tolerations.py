"""Taints and tolerations.

Cases follow kubernetes/kubernetes ``staging/src/k8s.io/api/core/v1/toleration_test.go``
(TestTolerationToleratesTaint: empty effect, Exists with empty key, Equal values, the
KEP-5471 numeric Lt/Gt operators) and ``component-helpers/scheduling/corev1/helpers_test.go``
(TestFindMatchingUntoleratedTaint), plus the TaintToleration plugin's Filter/Score rules.
"""

from __future__ import annotations

import pytest

from gpuplane.k8s.objects import Taint, Toleration
from gpuplane.k8s.tolerations import (
    count_intolerable_prefer_no_schedule,
    find_untolerated_taint,
    tolerates,
    tolerations_tolerate_taint,
)

GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"), GPU_TAINT, True),
        (Toleration(key="nvidia.com/gpu", operator="Exists"), GPU_TAINT, True),  # empty effect = all
        (Toleration(operator="Exists"), GPU_TAINT, True),  # empty key + Exists = everything
        (
            Toleration(key="nvidia.com/gpu", value="present", effect="NoSchedule"),
            GPU_TAINT,
            True,
        ),  # "" = Equal
        (Toleration(key="nvidia.com/gpu", operator="Equal", value="present"), GPU_TAINT, True),
        (Toleration(key="nvidia.com/gpu", operator="Equal", value="absent"), GPU_TAINT, False),
        (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoExecute"), GPU_TAINT, False),
        (Toleration(key="other", operator="Exists"), GPU_TAINT, False),
        (Toleration(operator="Equal", value="present"), GPU_TAINT, True),  # empty key matches all keys
        (Toleration(key="nvidia.com/gpu", operator="Bogus"), GPU_TAINT, False),
        # KEP-5471 numeric operators: Lt -> taint < toleration, Gt -> taint > toleration
        (
            Toleration(key="sla", operator="Lt", value="950"),
            Taint(key="sla", value="900", effect="NoSchedule"),
            True,
        ),
        (
            Toleration(key="sla", operator="Lt", value="900"),
            Taint(key="sla", value="900", effect="NoSchedule"),
            False,
        ),
        (
            Toleration(key="sla", operator="Gt", value="100"),
            Taint(key="sla", value="900", effect="NoSchedule"),
            True,
        ),
        (
            Toleration(key="sla", operator="Gt", value="x"),
            Taint(key="sla", value="900", effect="NoSchedule"),
            False,
        ),
        (
            Toleration(key="sla", operator="Gt", value="1"),
            Taint(key="sla", value="high", effect="NoSchedule"),
            False,
        ),
    ],
)
def test_tolerates(toleration: Toleration, taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_dicts_are_accepted() -> None:
    assert tolerates(
        {"key": "nvidia.com/gpu", "operator": "Exists"}, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    )
    assert not tolerates({"key": "a", "value": "1"}, {"key": "a", "value": "2", "effect": "NoSchedule"})


def test_find_untolerated_taint() -> None:
    taints = [
        Taint(key="soft", effect="PreferNoSchedule"),
        Taint(key="node.kubernetes.io/not-ready", effect="NoExecute"),
        GPU_TAINT,
    ]
    ready = Toleration(
        key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", toleration_seconds=300
    )
    gpu = Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")
    assert find_untolerated_taint(taints, []) is taints[1]  # PreferNoSchedule is not filtered
    assert find_untolerated_taint(taints, [ready]) is GPU_TAINT
    assert find_untolerated_taint(taints, [ready, gpu]) is None
    assert find_untolerated_taint(taints, [], effects=("PreferNoSchedule",)) is taints[0]
    assert find_untolerated_taint([], [gpu]) is None


def test_tolerations_tolerate_taint() -> None:
    assert tolerations_tolerate_taint(
        [Toleration(key="x", operator="Exists"), Toleration(operator="Exists")], GPU_TAINT
    )
    assert not tolerations_tolerate_taint([], GPU_TAINT)


def test_prefer_no_schedule_count() -> None:
    taints = [Taint(key="a", effect="PreferNoSchedule"), Taint(key="b", effect="PreferNoSchedule"), GPU_TAINT]
    assert count_intolerable_prefer_no_schedule(taints, []) == 2
    assert count_intolerable_prefer_no_schedule(taints, [Toleration(key="a", operator="Exists")]) == 1
    # a toleration with effect NoSchedule does not take part in scoring
    assert (
        count_intolerable_prefer_no_schedule(taints, [Toleration(operator="Exists", effect="NoSchedule")])
        == 2
    )
    assert (
        count_intolerable_prefer_no_schedule(
            taints, [Toleration(operator="Exists", effect="PreferNoSchedule")]
        )
        == 0
    )
