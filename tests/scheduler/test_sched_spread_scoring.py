"""PodTopologySpread scoring (ScheduleAnyway and the system default constraints).

Expected scores are worked by hand from kubernetes/kubernetes
pkg/scheduler/framework/plugins/podtopologyspread/scoring.go: ``Score`` sums, per constraint,
``scoreForCount(cnt, maxSkew, w) = cnt * w + (maxSkew - 1)`` with
``w = topologyNormalizingWeight(size) = ln(size + 2)`` and rounds (``math.Round``);
``NormalizeScore`` maps ``s`` to ``100 * (max + min - s) / max`` (integer division), 0 for the
ignored nodes; the plugin weight in the default profile is 2
(pkg/scheduler/apis/config/v1/default_plugins.go). Each test compares the pod's total scores
with the same cluster where spread does not apply, so the difference is the spread score x 2.
"""

from __future__ import annotations

from typing import Any

from sched_helpers import node, obj, pod, scheduler

from gpuplane.scheduler.framework import ScheduleResult

WEB = {"app": "web"}


def _soft(key: str, max_skew: int, when: str = "ScheduleAnyway") -> dict[str, Any]:
    return {
        "topologySpreadConstraints": [
            {
                "maxSkew": max_skew,
                "topologyKey": key,
                "whenUnsatisfiable": when,
                "labelSelector": {"matchLabels": WEB},
            }
        ]
    }


def _scores(docs: list[dict]) -> tuple[str, dict[str, int]]:
    s = scheduler(docs, "1.34")
    target = next(p for p in s.cluster.pending_pods if p.metadata.name == "p")
    result = s.schedule_one(target)
    assert isinstance(result, ScheduleResult)
    return result.node, result.scores


def _spread_part(with_spread: list[dict], without: list[dict]) -> dict[str, int]:
    _, a = _scores(with_spread)
    _, b = _scores(without)
    return {name: a[name] - b[name] for name in a}


def _web(name: str, on: str, **kw: Any) -> dict:
    return pod(name, node_name=on, labels=WEB, cpu=None, **kw)


def test_soft_hostname_spread() -> None:
    # 3 feasible nodes, none ignored: w = ln(5) = 1.609; web pods a:2 b:1 c:0
    # raw a = round(3.219) = 3, b = round(1.609) = 2, c = 0; max 3, min 0
    # normalized a = 100*(3-3)/3 = 0, b = 100*(3-2)/3 = 33, c = 100; x2
    existing = [_web("w1", "a"), _web("w2", "a"), _web("w3", "b")]
    nodes = [node("a"), node("b"), node("c")]
    spread = [*nodes, *existing, pod("p", labels=WEB, spec=_soft("kubernetes.io/hostname", 1))]
    plain = [*nodes, *existing, pod("p", labels=WEB)]
    assert _spread_part(spread, plain) == {"a": 0, "b": 66, "c": 200}


def test_soft_zone_spread_ignores_nodes_without_the_key() -> None:
    # d has no zone label: with the pod's own constraints it is ignored (score 0).
    # domains z1, z2: w = ln(4) = 1.386; z1 holds 3 web pods (a:2, b:1), z2 one (c); the web pod
    # on d and the one in another namespace (c) do not count (countPodsMatchSelector).
    # raw a = b = round(3*1.386 + 1) = 5, c = round(1.386 + 1) = 2; max 5, min 2
    # normalized a = b = 100*(7-5)/5 = 40, c = 100*(7-2)/5 = 100, d = 0; x2
    nodes = [
        node("a", labels={"topology.kubernetes.io/zone": "z1"}),
        node("b", labels={"topology.kubernetes.io/zone": "z1"}),
        node("c", labels={"topology.kubernetes.io/zone": "z2"}),
        node("d"),
    ]
    existing = [
        _web("w1", "a"),
        _web("w2", "a"),
        _web("w3", "b"),
        _web("w4", "c"),
        _web("w5", "d"),
        _web("other-ns", "c", ns="other"),
    ]
    spread = [*nodes, *existing, pod("p", labels=WEB, spec=_soft("topology.kubernetes.io/zone", 2))]
    plain = [*nodes, *existing, pod("p", labels=WEB)]
    assert _spread_part(spread, plain) == {"a": 80, "b": 80, "c": 200, "d": 0}


def test_do_not_schedule_only_is_not_scored_and_gets_no_defaults() -> None:
    # A pod with constraints never gets the system defaults (initPreScoreState), and
    # DoNotSchedule constraints are not scored: PreScore returns Skip.
    service = obj("Service", "web", ns="default", spec={"selector": WEB})
    existing = [_web("w1", "a")]
    nodes = [node("a"), node("b")]
    hard = _soft("kubernetes.io/hostname", 5, when="DoNotSchedule")
    with_hard = [*nodes, *existing, service, pod("p", labels=WEB, spec=hard)]
    plain = [*nodes, *existing, pod("p", labels=WEB)]
    assert _spread_part(with_hard, plain) == {"a": 0, "b": 0}


def _default_cluster() -> tuple[list[dict], list[dict]]:
    nodes = [
        node("a", labels={"topology.kubernetes.io/zone": "z1"}),
        node("b", labels={"topology.kubernetes.io/zone": "z1"}),
        node("c", labels={"topology.kubernetes.io/zone": "z2"}),
        node("d"),
    ]
    return nodes, [_web("w1", "a"), _web("w2", "a"), _web("w3", "c")]


# System defaults (plugin.go systemDefaultConstraints): zone maxSkew 5, hostname maxSkew 3, and
# requireAllTopologies false, so d (no zone label) is scored and adds the "" zone domain:
# zone: domains z1, z2, "" -> w = ln(5) = 1.609, +4; hostname: 4 nodes -> w = ln(6) = 1.792, +2
# a = round(2*1.609+4 + 2*1.792+2) = round(12.80) = 13
# b = round(2*1.609+4 + 2) = round(9.22) = 9;  c = round(1.609+4 + 1.792+2) = round(9.40) = 9
# d = round(0 + 2) = 2 (no zone label: that constraint adds nothing)
# max 13, min 2: a = 100*2/13 = 15, b = c = 100*6/13 = 46, d = 100; x2
DEFAULT_SPREAD = {"a": 30, "b": 92, "c": 92, "d": 200}


def test_system_defaults_for_a_service_member() -> None:
    nodes, existing = _default_cluster()
    service = obj("Service", "web", ns="default", spec={"selector": WEB})
    member = [*nodes, *existing, service, pod("p", labels=WEB)]
    plain = [*nodes, *existing, pod("p", labels=WEB)]
    assert _spread_part(member, plain) == DEFAULT_SPREAD
    assert _scores(member)[0] == "d"
    # a Service of another namespace, or with no selector, does not select the pod (GetPodServices)
    elsewhere = obj("Service", "web", ns="other", spec={"selector": WEB})
    no_selector = obj("Service", "headless", ns="default", spec={})
    assert _spread_part(
        [*nodes, *existing, elsewhere, no_selector, pod("p", labels=WEB)], plain
    ) == dict.fromkeys("abcd", 0)


def _owned(kind: str, api_version: str, name: str) -> dict:
    body = pod("p", labels=WEB)
    body["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u1", "controller": True}
    ]
    return body


def test_system_defaults_for_a_replicaset_or_statefulset_member() -> None:
    nodes, existing = _default_cluster()
    plain = [*nodes, *existing, pod("p", labels=WEB)]
    rs = obj("ReplicaSet", "web-1", "apps/v1", ns="default", spec={"selector": {"matchLabels": WEB}})
    sts = obj("StatefulSet", "db", "apps/v1", ns="default", spec={"selector": {"matchLabels": WEB}})
    assert (
        _spread_part([*nodes, *existing, rs, _owned("ReplicaSet", "apps/v1", "web-1")], plain)
        == DEFAULT_SPREAD
    )
    assert (
        _spread_part([*nodes, *existing, sts, _owned("StatefulSet", "apps/v1", "db")], plain)
        == DEFAULT_SPREAD
    )
    # helper.DefaultSelector looks the controller up by name: missing, or a Job owner, means no
    # selector, so no default constraints.
    assert _spread_part([*nodes, *existing, _owned("ReplicaSet", "apps/v1", "gone")], plain) == dict.fromkeys(
        "abcd", 0
    )
    assert _spread_part([*nodes, *existing, _owned("Job", "batch/v1", "train")], plain) == dict.fromkeys(
        "abcd", 0
    )


def test_spread_changes_the_chosen_node() -> None:
    # Without spread the least-allocated first node wins; with a soft hostname constraint the
    # node with fewer matching pods wins although it is more loaded.
    nodes = [node("a"), node("b")]
    existing = [
        _web(
            "w1",
            "a",
        ),
        _web("w2", "a"),
        pod("busy", node_name="b", cpu="1"),
    ]
    assert _scores([*nodes, *existing, pod("p", labels=WEB)])[0] == "a"
    assert (
        _scores([*nodes, *existing, pod("p", labels=WEB, spec=_soft("kubernetes.io/hostname", 1))])[0] == "b"
    )


# NodeResourcesBalancedAllocation (noderesources/balanced_allocation.go): built with
# useRequested true, so the pod's actual requests count (no 100m / 200Mi defaults:
# resource_allocation.go calculatePodResourceRequest), and a pod requesting neither cpu nor
# memory is skipped at PreScore (isBestEffortPod). Node: 4 cpu, 1Gi; other plugins: only
# TaintToleration, 100 x 3 on untainted nodes.


def test_balanced_allocation_uses_the_actual_requests() -> None:
    # cpu 2 (of 4000m), memory unset. LeastAllocated (non-zero: memory 200Mi):
    # cpu (4000-2000)*100/4000 = 50, memory (1073741824-209715200)*100/1073741824 = 80 -> 65.
    # Balanced: fractions 0.5 and 0 (actual) -> int((1 - 0.25) * 100) = 75 (with 200Mi: 84).
    nodes = [node("a", cpu="4", memory="1Gi"), node("b", cpu="4", memory="1Gi")]
    assert _scores([*nodes, pod("p", cpu="2")])[1] == {"a": 65 + 75 + 300, "b": 65 + 75 + 300}


def test_balanced_allocation_skips_best_effort_pods() -> None:
    # no requests: LeastAllocated counts 100m / 200Mi: cpu 3900*100/4000 = 97, memory 80 -> 88;
    # BalancedAllocation PreScore returns Skip: 0.
    nodes = [node("a", cpu="4", memory="1Gi"), node("b", cpu="4", memory="1Gi")]
    assert _scores([*nodes, pod("p", cpu=None)])[1] == {"a": 88 + 300, "b": 88 + 300}
