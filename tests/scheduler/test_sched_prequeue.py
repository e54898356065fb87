"""Pods that never reach kube-scheduler: gates, absent schedulers, gangs, Kueue, quota."""

from __future__ import annotations

from sched_helpers import node, obj, pod, scheduler

from gpuplane.why_pending.explain import explain, pending


def _one(docs: list[dict]):
    s = scheduler(docs)
    return s, explain(s, s.cluster.pending_pods[0])


def test_scheduling_gates_and_kueue() -> None:
    gated = pod(
        "p",
        labels={"kueue.x-k8s.io/queue-name": "team"},
        spec={"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
    )
    _, expl = _one([node("a"), gated])
    assert expl.stage == "gated"
    assert expl.message == "Scheduling is blocked due to non-empty scheduling gates"
    assert any("Kueue holds it" in c for c in expl.cause_texts())


def test_scheduler_not_running() -> None:
    _, expl = _one([node("a"), pod("p", spec={"schedulerName": "volcano"})])
    assert expl.stage == "other-scheduler"
    assert "no scheduler of that name runs" in expl.cause_texts()[0]


def test_coscheduling_gang_short_of_members() -> None:
    pg = obj("PodGroup", "g", "scheduling.x-k8s.io/v1alpha1", ns="default", spec={"minMember": 4})
    sched_pod = pod("scheduler-plugins-scheduler-abc", ns="kube-system", node_name="a")
    member = pod(
        "p",
        labels={"scheduling.x-k8s.io/pod-group": "g"},
        spec={"schedulerName": "scheduler-plugins-scheduler"},
    )
    _, expl = _one([node("a"), pg, sched_pod, member])
    assert expl.stage == "gang"
    assert expl.message == (
        "0/1 nodes are available: pre-filter pod p cannot find enough sibling pods, "
        "current pods number: 1, minMember of group: 4."
    )


def test_kueue_suspended_job_without_local_queue() -> None:
    job = obj(
        "Job",
        "train",
        "batch/v1",
        ns="ml",
        metadata={"labels": {"kueue.x-k8s.io/queue-name": "gpu"}},
        spec={"suspend": True, "template": {"spec": {"containers": [{"name": "c"}]}}},
    )
    s = scheduler([node("a"), job])
    (expl,) = pending(s)
    assert expl.stage == "queue"
    assert expl.message == "LocalQueue gpu doesn't exist"
    assert expl.subject is not None and expl.subject["kind"] == "Job"


def test_quota_refused_controller() -> None:
    text = (
        'pods "train-x" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8, '
        "used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
    )
    rs = obj(
        "ReplicaSet",
        "train",
        "apps/v1",
        ns="ml",
        status={
            "conditions": [
                {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": text}
            ]
        },
    )
    s = scheduler([node("a"), rs])
    (expl,) = pending(s)
    assert expl.stage == "quota" and expl.message == text


def test_schedule_and_assume() -> None:
    s = scheduler(
        [node("a", gpus=8), node("b", gpus=8), pod("p", gpus=8), pod("q", gpus=8), pod("r", gpus=8)]
    )
    from gpuplane.scheduler.framework import FitError

    placed = []
    for p in s.cluster.pending_pods:
        result = s.schedule(p)
        if isinstance(result, FitError):
            placed.append(None)
            assert result.message().startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
        else:
            s.assume(p, result.node)
            placed.append(result.node)
    assert sorted(filter(None, placed)) == ["a", "b"] and placed[-1] is None
