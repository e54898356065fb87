"""DefaultPreemption's orderings, key by key as kube-scheduler v1.36 has them.

Upstream (kubernetes/kubernetes):
- pkg/scheduler/framework/preemption/preemption.go ``pickOneNodeForPreemption``: fewest PDB
  violations, lowest highest-victim priority, smallest sum of victim priorities each offset by
  ``math.MaxInt32+1``, fewest victims, latest ``util.GetEarliestPodStartTime`` of the victims,
  then the first node;
- pkg/scheduler/util/utils.go ``MoreImportantPod`` / ``GetPodStartTime``: higher priority first,
  then the earlier ``status.startTime``; a pod without one reads as started "now".
Each case below gave another node or other victims before gpuplane followed that key.
"""

from __future__ import annotations

from sched_helpers import disruption_budget, node, pod, scheduler

from gpuplane.why_pending.explain import explain


def started(doc: dict, when: str) -> dict:
    doc["status"]["startTime"] = when
    return doc


def picked(docs: list[dict]) -> tuple[str | None, list[str]]:
    s = scheduler(docs)
    expl = explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == "p"))
    assert expl.preemption is not None
    return expl.preemption.nominated_node, [v.metadata.name for v in expl.preemption.victims]


def test_priority_sum_is_offset_so_negative_victims_still_cost_more() -> None:
    """Node a needs its three priority -10 pods gone, node b its one: raw sums (-30 < -10)
    would pick a; with each priority offset by MaxInt32+1, a's sum is three offsets, b's one,
    and b wins on the third key (minSumPrioritiesScoreFunc)."""
    docs = [
        node("a", gpus=4),
        node("b", gpus=4),
        pod("a1", node_name="a", gpus=2, priority=-10),
        pod("a2", node_name="a", gpus=1, priority=-10),
        pod("a3", node_name="a", gpus=1, priority=-10),
        pod("b1", node_name="b", gpus=4, priority=-10),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("b", ["b1"])


def test_latest_start_of_the_top_victims_breaks_a_full_tie() -> None:
    """Both nodes cost one victim of priority 5: the fifth key (latestStartTimeScoreFunc)
    prefers the node whose victim started last, b, over the first node."""
    docs = [
        node("a", gpus=4),
        node("b", gpus=4),
        started(pod("old", node_name="a", gpus=4, priority=5), "2026-01-01T00:00:00Z"),
        started(pod("young", node_name="b", gpus=4, priority=5), "2026-03-01T00:00:00Z"),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("b", ["young"])


def test_start_time_counts_only_the_highest_priority_victims() -> None:
    """a's victims: priority 5 started in February and priority 1 in June; b's: priority 5
    started in March and priority 1 in 2020. GetEarliestPodStartTime looks at the priority-5
    victims only: b's (March) started later than a's (February), so b wins although its
    priority-1 victim is the oldest of all (the earliest start of all victims would pick a)."""
    docs = [
        node("a", gpus=4),
        node("b", gpus=4),
        started(pod("a-top", node_name="a", gpus=2, priority=5), "2026-02-01T00:00:00Z"),
        started(pod("a-low", node_name="a", gpus=2, priority=1), "2026-06-01T00:00:00Z"),
        started(pod("b-top", node_name="b", gpus=2, priority=5), "2026-03-01T00:00:00Z"),
        started(pod("b-low", node_name="b", gpus=2, priority=1), "2020-01-01T00:00:00Z"),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("b", ["b-top", "b-low"])


def test_a_victim_not_yet_started_reads_as_started_now() -> None:
    """GetPodStartTime gives time.Now() to a pod without status.startTime: it is the youngest,
    so its node wins the fifth key."""
    docs = [
        node("a", gpus=4),
        node("b", gpus=4),
        started(pod("running", node_name="a", gpus=4, priority=5), "2026-03-01T00:00:00Z"),
        pod("starting", node_name="b", gpus=4, priority=5),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("b", ["starting"])


def test_equal_start_times_keep_the_first_node() -> None:
    docs = [
        node("a", gpus=4),
        node("b", gpus=4),
        started(pod("x", node_name="a", gpus=4, priority=5), "2026-03-01T00:00:00Z"),
        started(pod("y", node_name="b", gpus=4, priority=5), "2026-03-01T00:00:00Z"),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("a", ["x"])


def test_of_two_equal_priority_pods_the_older_is_reprieved_first() -> None:
    """SelectVictimsOnNode sorts the potential victims with MoreImportantPod before the
    reprieve: at equal priority the pod that started earlier comes first and fits back, so the
    younger one is evicted, whatever their order on the node."""
    docs = [
        node("a", gpus=4),
        started(pod("young", node_name="a", gpus=2, priority=5), "2026-03-01T00:00:00Z"),
        started(pod("old", node_name="a", gpus=2, priority=5), "2026-01-01T00:00:00Z"),
        pod("p", gpus=2, priority=100),
    ]
    assert picked(docs) == ("a", ["young"])


def test_a_pod_not_yet_started_is_the_least_important_of_its_priority() -> None:
    docs = [
        node("a", gpus=4),
        pod("starting", node_name="a", gpus=2, priority=5),
        started(pod("running", node_name="a", gpus=2, priority=5), "2026-03-01T00:00:00Z"),
        pod("p", gpus=2, priority=100),
    ]
    assert picked(docs) == ("a", ["starting"])


def test_victims_of_both_pdb_groups_are_listed_most_important_first() -> None:
    """The reprieve tries the PDB-violating pods first and appends victims group by group;
    SelectVictimsOnNode then sorts them by MoreImportantPod when both groups were non-empty, so
    plain (priority 3) comes before guarded (priority 1, its PDB allows no disruption)."""
    pdb = disruption_budget("keep", {"matchLabels": {"app": "keep"}}, {"disruptionsAllowed": 0})
    docs = [
        node("a", gpus=4),
        pdb,
        pod("guarded", node_name="a", gpus=2, priority=1, labels={"app": "keep"}),
        pod("plain", node_name="a", gpus=2, priority=3),
        pod("p", gpus=4, priority=100),
    ]
    assert picked(docs) == ("a", ["plain", "guarded"])


# defaultpreemption/default_preemption.go filterPodsWithPDBViolation: which victims break a PDB.


def pdb_cluster(selector: dict | None, status: dict) -> list[dict]:
    """Node a runs guarded (PDB-selected, priority 5) and plain (priority 1), two GPUs each; the
    incoming pod asks for two. Guarded is reprieved first either way (PDB-violating pods go back
    first, and it is the more important one), so plain is the victim; an incoming pod of four
    GPUs evicts both, and ``pdb_violations`` says whether guarded broke its PDB."""
    return [
        node("a", gpus=4),
        disruption_budget("keep", selector, status),
        pod("guarded", node_name="a", gpus=2, priority=5, labels={"app": "keep"}),
        pod("plain", node_name="a", gpus=2, priority=1, labels={"app": "other"}),
        pod("p", gpus=2, priority=100),
    ]


def outcome_of(docs: list[dict]) -> tuple[str | None, list[str], int]:
    s = scheduler(docs)
    expl = explain(s, next(p for p in s.cluster.pending_pods if p.metadata.name == "p"))
    assert expl.preemption is not None
    found = expl.preemption
    return found.nominated_node, [v.metadata.name for v in found.victims], found.pdb_violations


def test_a_pdb_that_allows_no_disruption_protects_its_pod() -> None:
    docs = pdb_cluster({"matchLabels": {"app": "keep"}}, {"disruptionsAllowed": 0})
    assert outcome_of(docs) == ("a", ["plain"], 0)


def test_a_pod_already_in_disrupted_pods_does_not_count_against_the_budget() -> None:
    """``pdb.Status.DisruptedPods[pod.Name]`` exists: upstream continues without decrementing,
    so guarded breaks nothing and is tried with the non-violating pods."""
    status = {"disruptionsAllowed": 0, "disruptedPods": {"guarded": "2026-03-01T00:00:00Z"}}
    docs = pdb_cluster({"matchLabels": {"app": "keep"}}, status)
    docs[-1] = pod("p", gpus=4, priority=100)
    assert outcome_of(docs) == ("a", ["guarded", "plain"], 0)


def test_a_disrupted_pod_of_another_name_still_counts() -> None:
    status = {"disruptionsAllowed": 0, "disruptedPods": {"someone-else": "2026-03-01T00:00:00Z"}}
    docs = pdb_cluster({"matchLabels": {"app": "keep"}}, status)
    docs[-1] = pod("p", gpus=4, priority=100)
    assert outcome_of(docs) == ("a", ["guarded", "plain"], 1)


def test_a_disrupted_pod_leaves_the_budget_to_the_others() -> None:
    """One disruption allowed, two selected victims, one of them already in disruptedPods: it
    is not counted ("we may over-decrement the budget number"), so the other one uses the one
    allowed disruption and nothing is violated."""
    status = {"disruptionsAllowed": 1, "disruptedPods": {"g1": "2026-03-01T00:00:00Z"}}
    docs = [
        node("a", gpus=4),
        disruption_budget("keep", {"matchLabels": {"app": "keep"}}, status),
        pod("g1", node_name="a", gpus=2, priority=5, labels={"app": "keep"}),
        pod("g2", node_name="a", gpus=2, priority=5, labels={"app": "keep"}),
        pod("p", gpus=4, priority=100),
    ]
    assert outcome_of(docs) == ("a", ["g1", "g2"], 0)


def test_a_pdb_with_an_empty_selector_matches_nothing() -> None:
    """``selector.Empty()``: the scheduler skips it, so guarded is not protected."""
    docs = pdb_cluster({}, {"disruptionsAllowed": 0})
    docs[-1] = pod("p", gpus=4, priority=100)
    assert outcome_of(docs) == ("a", ["guarded", "plain"], 0)


def test_a_pdb_without_a_selector_matches_nothing() -> None:
    """``LabelSelectorAsSelector(nil)`` is ``labels.Nothing()``."""
    docs = pdb_cluster(None, {"disruptionsAllowed": 0})
    docs[-1] = pod("p", gpus=4, priority=100)
    assert outcome_of(docs) == ("a", ["guarded", "plain"], 0)


def test_a_pod_without_labels_matches_no_pdb() -> None:
    """``len(pod.Labels) == 0`` is skipped before any selector, even one that only excludes."""
    selector = {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["other"]}]}
    docs = [
        node("a", gpus=4),
        disruption_budget("keep", selector, {"disruptionsAllowed": 0}),
        pod("bare", node_name="a", gpus=4, priority=5),
        pod("p", gpus=4, priority=100),
    ]
    assert outcome_of(docs) == ("a", ["bare"], 0)
