"""gpuplane simulate: small scenarios computed by hand, one per scheduler mode and autoscaler.

Cluster for most tests (tests/fixtures/simulate/cluster-2x8.yaml): gpu-1 and gpu-2, 8 GPUs
each, empty. Jobs (two-jobs.yaml): job-a and job-b, PyTorchJobs of 2 pods (master + worker) x
8 GPUs, arriving together at t=0, 3600 s each.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.framework import ScheduleResult
from gpuplane.scheduler.simulate import simulate
from gpuplane.scheduler.simulate.autoscaler import Autoscaler
from gpuplane.scheduler.simulate.coldstart import default_model
from gpuplane.scheduler.simulate.state import SimCluster
from gpuplane.sources import load_paths
from gpuplane.sources.manifest import Manifest

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "simulate"
GPU_FULL = (
    "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. "
    "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
)


def load(*names: str) -> list[Manifest]:
    return list(load_paths([str(FIX / n) for n in names]).objects)


def cluster(*names: str) -> ClusterState:
    return ClusterState.from_objects(load(*names))


def run(mode: str, jobs: list[Manifest], state: ClusterState | None = None, **kw: Any) -> dict[str, Any]:
    return simulate(state or cluster("cluster-2x8.yaml"), jobs, scheduler=mode, **kw)


def test_default_scheduler_deadlocks():
    """Queue order interleaves the two jobs' pods (created together): a-master-0, b-master-0,
    a-worker-0, b-worker-0. a-master-0 -> gpu-1 (equal scores, lowest index), b-master-0 ->
    gpu-2; both workers find 0 free GPUs and no lower-priority victim. No event is left:
    deadlock, 2 pods holding 16 GPUs idle; nothing ever completes (makespan null)."""
    doc = run("default", load("two-jobs.yaml"))
    assert doc["placements"] == [
        {"pod": "default/job-a-master-0", "node": "gpu-1", "time_s": 0.0},
        {"pod": "default/job-b-master-0", "node": "gpu-2", "time_s": 0.0},
    ]
    assert [(p["pod"], p["message"]) for p in doc["pending"]] == [
        ("default/job-a-worker-0", GPU_FULL),
        ("default/job-b-worker-0", GPU_FULL),
    ]
    deadlock = doc["deadlock"]
    assert deadlock["pods_held"] == 2
    assert deadlock["gpus_held_idle"] == 16
    assert [j["job"] for j in deadlock["jobs"]] == ["PyTorchJob/default/job-a", "PyTorchJob/default/job-b"]
    assert doc["summary"]["makespan_s"] is None
    assert doc["timeline"][0]["gpus_idle_held"] == 16
    # every GPU is allocated and none does work: that is what the deadlock costs
    assert (doc["summary"]["gpu_allocation"], doc["summary"]["gpu_utilization"]) == (1.0, 0.0)


def _gang_expectations(doc: dict[str, Any]) -> None:
    """job-a's 2 pods at t=0 (gpu-1, gpu-2), job-b's at t=3600 when job-a completes;
    makespan 7200; 16 of 16 GPUs allocated over [0, 7200]: utilization 1.0; no deadlock."""
    assert doc["placements"] == [
        {"pod": "default/job-a-master-0", "node": "gpu-1", "time_s": 0.0},
        {"pod": "default/job-a-worker-0", "node": "gpu-2", "time_s": 0.0},
        {"pod": "default/job-b-master-0", "node": "gpu-1", "time_s": 3600.0},
        {"pod": "default/job-b-worker-0", "node": "gpu-2", "time_s": 3600.0},
    ]
    assert doc["pending"] == []
    assert doc["deadlock"] is None
    assert doc["summary"] == doc["summary"] | {
        "scheduled": 4,
        "pending": 0,
        "gpu_utilization": 1.0,
        "gpu_allocation": 1.0,
        "makespan_s": 7200.0,
        "gpu_seconds_idle_held": 0.0,
    }
    assert [s["time_s"] for s in doc["timeline"]] == [0.0, 3600.0, 7200.0]


def test_volcano_gang_completes():
    _gang_expectations(run("volcano", load("two-jobs.yaml")))


def test_coscheduling_completes():
    _gang_expectations(run("coscheduling", load("two-jobs.yaml")))


def test_volcano_queue_capability():
    """Queue `small` has capability 8 GPUs: a 16-GPU gang never enters (PodGroup stays Pending)."""
    jobs = load("two-jobs.yaml")
    for job in jobs:
        job.data["spec"]["runPolicy"] = {"schedulingPolicy": {"queue": "small"}}
    queue = Manifest(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "small"},
            "spec": {"weight": 1, "capability": {"nvidia.com/gpu": "8"}},
        }
    )
    doc = run("volcano", [queue, *jobs])
    assert doc["placements"] == []
    assert {p["message"] for p in doc["pending"]} == {
        "queue resource quota insufficient: insufficient nvidia.com/gpu"
    }


def test_volcano_gang_message_when_too_big():
    """A 3-pod x 8-GPU gang on 16 GPUs: 2 pods could go, the third cannot; nothing is held."""
    job = load("two-jobs.yaml")[0]
    job.data["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 2
    doc = run("volcano", [job])
    assert doc["placements"] == []
    by_pod = {p["pod"]: p["message"] for p in doc["pending"]}
    assert by_pod == {
        "default/job-a-master-0": "Pod default/job-a-master-0 can possibly be assigned to gpu-1, once minAvailable is satisfied",
        "default/job-a-worker-0": "Pod default/job-a-worker-0 can possibly be assigned to gpu-2, once minAvailable is satisfied",
        "default/job-a-worker-1": "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu.",
    }
    assert doc["jobs"][0]["message"] == (
        "1/3 tasks in gang unschedulable: pod group is not ready, 3 Pending, 3 minAvailable; "
        "Pending: 1 Unschedulable, 2 Schedulable. Origin reason is job-a-worker-1: "
        "0/2 nodes are unavailable: 2 Insufficient nvidia.com/gpu."
    )
    assert doc["deadlock"] is None


KUEUE = [
    {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
        "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}},
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 192},
                                {"name": "memory", "nominalQuota": "2000Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 16},
                            ],
                        }
                    ],
                }
            ],
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "default"},
        "spec": {"clusterQueue": "cq"},
    },
]


def test_kueue_admits_whole_workloads():
    """Quota 16 GPUs: job-a admitted at 0 (16 GPUs reserved, pods get the flavor's nodeSelector);
    job-b waits: for each pod set 8 GPUs more are needed; at 3600 job-a's quota is released and
    job-b is admitted and placed."""
    jobs = load("two-jobs.yaml")
    for job in jobs:
        job.data["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "lq"}
    state = ClusterState.from_objects([*load("cluster-2x8.yaml"), *(Manifest(d) for d in KUEUE)])
    doc = run("kueue", jobs, state)
    _gang_expectations(doc)
    events = [e for s in doc["timeline"] for e in s["events"] if e["type"] == "quota-pending"]
    assert events[0]["message"] == (
        "couldn't assign flavors to pod set master: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "8 more needed; couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu "
        "in flavor a100, 8 more needed"
    )


def test_resource_quota_refuses_second_pod():
    """A quota of requests.nvidia.com/gpu=8 in `default`: job-a's first pod is created (8 of 8),
    the second is refused by admission with the apiserver's text; one pod runs, never starts."""
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-quota", "namespace": "default"},
        "spec": {"hard": {"requests.nvidia.com/gpu": "8"}},
    }
    state = ClusterState.from_objects([*load("cluster-2x8.yaml"), Manifest(quota)])
    doc = run("default", load("two-jobs.yaml")[:1], state)
    assert doc["placements"] == [{"pod": "default/job-a-master-0", "node": "gpu-1", "time_s": 0.0}]
    assert doc["pending"][0]["message"] == (
        'pods "job-a-worker-0" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8, '
        "used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
    )


NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu"},
    "spec": {
        "template": {
            "spec": {
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            }
        },
        "limits": {"nvidia.com/gpu": 8},
    },
}
NODEGROUP = {
    "apiVersion": "gpuplane.io/v1alpha1",
    "kind": "ClusterAutoscalerNodeGroup",
    "metadata": {"name": "a100"},
    "spec": {"instanceType": "p4d.24xlarge", "minSize": 0, "maxSize": 1},
}
TRAIN = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "train",
        "namespace": "default",
        "annotations": {"gpuplane.io/duration-s": "600", "gpuplane.io/image-size-gib": "10"},
    },
    "spec": {
        "template": {
            "spec": {
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [
                    {
                        "name": "t",
                        "image": "nvcr.io/nvidia/pytorch:24.08-py3",
                        "resources": {"limits": {"nvidia.com/gpu": 8}, "requests": {"cpu": "8"}},
                    }
                ],
            }
        }
    },
}


def _autoscale(pool: dict[str, Any], kind: str) -> dict[str, Any]:
    empty = ClusterState.from_objects([])
    scaler, errors = Autoscaler.from_objects([Manifest(pool)], "auto")
    assert errors == [] and scaler is not None and scaler.kind == kind
    return simulate(empty, [Manifest(TRAIN)], autoscaler=scaler, cold_start=default_model())


def test_karpenter_cold_start():
    """Catalog figures: karpenter_batching 1 + vm_provisioning 210 (typical) + gpu_stack_ready 900
    (only the upper bound is published) = 1111 s to a Ready p4d node; the pod binds at 1111,
    pulls 10 GiB x 60 s/GiB = 600 s, runs from 1711 for 600 s: done at 2311."""
    doc = _autoscale(NODEPOOL, "karpenter")
    assert doc["placements"] == [{"pod": "default/train-0", "node": "gpu-p4d-24xlarge-1", "time_s": 1111.0}]
    assert doc["nodes_added"][0]["ready_s"] == 1111.0
    assert [p["seconds"] for p in doc["nodes_added"][0]["cold_start"]] == [1.0, 210.0, 900.0]
    assert doc["summary"]["makespan_s"] == 2311.0


def test_cluster_autoscaler_cold_start():
    """autoscaler_decision 5 + vm_provisioning 210 + gpu_stack_ready 900 = 1115; + 600 s pull +
    600 s run = 2315."""
    doc = _autoscale(NODEGROUP, "cluster-autoscaler")
    assert doc["placements"] == [{"pod": "default/train-0", "node": "a100-p4d-24xlarge-1", "time_s": 1115.0}]
    assert doc["summary"]["makespan_s"] == 2315.0


def test_cold_start_override():
    scaler, _ = Autoscaler.from_objects([Manifest(NODEGROUP)], "auto")
    doc = simulate(
        ClusterState.from_objects([]),
        [Manifest(TRAIN)],
        autoscaler=scaler,
        cold_start=default_model({"gpu_stack_ready": 120, "image_pull_per_gib": 6}),
    )
    assert doc["placements"][0]["time_s"] == 5 + 210 + 120
    assert doc["summary"]["makespan_s"] == 335 + 60 + 600


def _node(name: str, gpus: int, cpu: str, labels: dict[str, str] | None = None, taint: bool = False) -> dict:
    alloc = {"cpu": cpu, "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    spec = {"taints": [{"key": "gpu", "value": "x", "effect": "NoSchedule"}]} if taint else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def test_fast_placer_matches_full_cycle():
    """The class-based fast path picks the node Scheduler.schedule_one picks, pod after pod."""
    rng = random.Random(7)
    from gpuplane.k8s.objects import pod_from_dict

    for _ in range(5):
        nodes = [
            _node(
                f"n{i}",
                rng.choice([0, 4, 8]),
                rng.choice(["8", "16"]),
                {"zone": rng.choice("ab")},
                taint=rng.random() < 0.2,
            )
            for i in range(12)
        ]
        state = ClusterState.from_objects([Manifest(n) for n in nodes])
        fast, slow = SimCluster(state), SimCluster(state, fast=False)
        for k in range(40):
            body = {
                "containers": [
                    {
                        "name": "c",
                        "image": "x",
                        "resources": {
                            "requests": {
                                "cpu": rng.choice(["500m", "2", "4"]),
                                "memory": rng.choice(["1Gi", "8Gi"]),
                            },
                            "limits": {"nvidia.com/gpu": str(rng.choice([0, 1, 2, 4]))},
                        },
                    }
                ]
            }
            if rng.random() < 0.3:
                body["nodeSelector"] = {"zone": rng.choice("ab")}
            if rng.random() < 0.3:
                body["tolerations"] = [{"key": "gpu", "operator": "Exists"}]
            pod = pod_from_dict(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"p{k}", "namespace": "d"},
                    "spec": body,
                }
            )
            a, b = fast.schedule(pod), slow.schedule(pod)
            assert type(a) is type(b)
            if isinstance(a, ScheduleResult):
                assert a.node == b.node
                fast.bind(pod, a.node)
                slow.bind(pod, b.node)
                if rng.random() < 0.2:
                    fast.forget(pod, a.node)
                    slow.forget(pod, b.node)
            else:
                assert a.message() == b.message()


def test_kueue_mode_notes_jobs_without_queue_label():
    """--scheduler kueue on jobs with no kueue.x-k8s.io/queue-name label: Kueue does not manage
    them (kube-scheduler places them as in default mode), and the notes and the deadlock advice
    say so."""
    doc = run("kueue", load("two-jobs.yaml"))
    note = "not managed by Kueue: no kueue.x-k8s.io/queue-name label; scheduled by the default scheduler"
    assert [n for n in doc["notes"] if "Kueue" in n] == [
        f"PyTorchJob/default/job-a: {note}",
        f"PyTorchJob/default/job-b: {note}",
    ]
    assert doc["deadlock"]["message"] == (
        "deadlock: 2 distributed job(s) are partly placed and none can start; 16 GPU(s) are held idle. Kueue admits "
        "a job all-or-nothing only when it carries the kueue.x-k8s.io/queue-name label: add it (the name of a "
        "LocalQueue in the job's namespace) to PyTorchJob/default/job-a, PyTorchJob/default/job-b"
    )
    default = run("default", load("two-jobs.yaml"))
    assert not any("Kueue" in n for n in default["notes"])
    assert default["deadlock"]["message"].endswith(
        "A gang scheduler (Volcano, coscheduling) or Kueue admission places such jobs all-or-nothing"
    )
