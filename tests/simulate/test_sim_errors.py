"""gpuplane simulate: regressions from the expert review (suspended Kueue workloads, image-pull
timeline, Volcano minAvailable < replicas, bare Pods refused by quota, job details in the JSON,
unusable inputs).

Clusters: nodes2x4.yaml (n1, n2: 4 GPUs each), cluster-2x8.yaml (gpu-1, gpu-2: 8 GPUs each),
cpu-1.yaml (one CPU node; GPU nodes come from a Karpenter NodePool).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.k8s.cluster import ClusterState
from gpuplane.scheduler.simulate.run import run_simulation
from gpuplane.sources import load_paths

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "simulate"
QUOTA_Q2 = (
    'pods "q2-0" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=2, '
    "used: requests.nvidia.com/gpu=3, limited: requests.nvidia.com/gpu=4"
)
QUOTA_BIG = QUOTA_Q2.replace('"q2-0"', '"big"')


def simulate(cluster: str, workloads: str, scheduler: str = "default") -> dict[str, Any]:
    state = ClusterState.from_objects(list(load_paths([str(FIX / cluster)]).objects))
    objects = list(load_paths([str(FIX / workloads)]).objects)
    return run_simulation(state, objects, scheduler=scheduler).document


def job(doc: dict[str, Any], key: str) -> dict[str, Any]:
    return next(j for j in doc["jobs"] if j["job"] == key)


# -- 1. suspended workloads ------------------------------------------------------------------


def test_suspended_kueue_jobs_are_admitted_by_kueue() -> None:
    doc = simulate("nodes2x4.yaml", "kueue-suspended.yaml", "kueue")
    assert doc["summary"]["scheduled"] == 2
    assert doc["summary"]["pending"] == 0
    assert doc["summary"]["makespan_s"] == 2000.0
    w2 = job(doc, "Job/default/w2")
    assert (w2["started_s"], w2["finished_s"]) == (1000.0, 2000.0)
    # Kueue names a batch Job's pod set "main" (kueue.DefaultPodSetName)
    assert w2["message"] == (
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
        "default-flavor, 4 more needed"
    )
    assert doc["notes"] == []


def test_suspended_pytorchjobs_are_admitted_by_kueue() -> None:
    doc = simulate("cluster-2x8.yaml", "kueue-suspended-ptj.yaml", "kueue")
    assert doc["summary"]["scheduled"] == 4
    assert doc["summary"]["makespan_s"] == 7200.0
    b = job(doc, "PyTorchJob/default/job-b")
    assert (b["pods"], b["min_member"], b["started_s"]) == (2, 2, 3600.0)
    assert b["message"] == (
        "couldn't assign flavors to pod set master: insufficient unused quota for nvidia.com/gpu in flavor "
        "default-flavor, 8 more needed; couldn't assign flavors to pod set worker: insufficient unused quota "
        "for nvidia.com/gpu in flavor default-flavor, 8 more needed"
    )


def test_suspended_jobs_without_kueue_are_reported_in_notes() -> None:
    doc = simulate("cluster-2x8.yaml", "kueue-suspended-ptj.yaml", "default")
    assert doc["summary"]["scheduled"] == 0
    assert doc["jobs"] == []
    assert doc["notes"] == [
        f"PyTorchJob default/{name} is suspended: creates no pods until spec.runPolicy.suspend is false "
        "(labelled kueue.x-k8s.io/queue-name=lq-a: Kueue resumes it on admission; simulate with --scheduler kueue)"
        for name in ("job-a", "job-b")
    ]


def test_plain_suspended_job_is_a_note_even_under_kueue(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: held, namespace: default}\n"
        "spec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    state = ClusterState.from_objects(list(load_paths([str(FIX / "nodes2x4.yaml")]).objects))
    doc = run_simulation(state, list(load_paths([str(path)]).objects), scheduler="kueue").document
    assert doc["notes"] == ["Job default/held is suspended: creates no pods until spec.suspend is false"]
    assert doc["summary"]["scheduled"] == 0 and doc["summary"]["pending"] == 0


# -- 2. image pull -----------------------------------------------------------------------------


def test_image_pull_then_running_is_a_timeline_step() -> None:
    doc = simulate("cpu-1.yaml", "karpenter-image-pull.yaml")
    steps = [
        (s["time_s"], [e["type"] for e in s["events"]], s["gpus_allocated"], s["gpus_idle_held"])
        for s in doc["timeline"]
    ]
    assert steps == [
        (0.0, ["arrived", "node-launched"], 0, 0),
        (1111.0, ["node-ready", "bound"], 8, 8),
        (1231.0, ["running"], 8, 0),
        (4831.0, ["completed", "job-completed"], 0, 0),
    ]
    # 8 GPUs x 120 s of image pull held idle; utilization (4831 - 1111 - 120) / (4831 - 1111)
    assert doc["summary"]["gpu_seconds_idle_held"] == 960.0
    assert doc["summary"]["gpu_utilization"] == 0.9677
    assert job(doc, "Job/default/j1")["started_s"] == 1231.0


# -- 3. Volcano minAvailable < replicas --------------------------------------------------------


def test_volcano_job_runs_once_min_available_pods_run() -> None:
    doc = simulate("nodes2x4.yaml", "volcano-min-available.yaml", "volcano")
    c = job(doc, "Job/default/c")
    # 2 GPUs free at t=100: 2 of c's 4 pods run, the gang (minAvailable 2) is satisfied
    assert (c["started_s"], c["finished_s"], c["min_member"], c["pods"]) == (100.0, 3700.0, 2, 4)
    steps = [
        (s["time_s"], [e["type"] for e in s["events"]], s["gpus_allocated"], s["gpus_idle_held"])
        for s in doc["timeline"]
    ]
    assert steps == [
        (0.0, ["arrived", "bound", "bound", "bound", "job-started"], 6, 0),
        (100.0, ["arrived", "bound", "bound", "job-started"], 8, 0),
        (1900.0, ["completed", "completed", "bound", "bound"], 8, 0),
        (3600.0, ["job-completed"], 2, 0),
        (3700.0, ["completed", "completed", "job-completed"], 0, 0),
    ]
    assert doc["summary"]["gpu_seconds_idle_held"] == 0.0
    assert doc["summary"]["gpu_utilization"] == 0.973
    assert doc["deadlock"] is None


# -- 4. quota refusals ---------------------------------------------------------------------------


def test_bare_pod_refused_by_quota_stays_refused() -> None:
    doc = simulate("nodes2x4.yaml", "quota-bare-pod.yaml")
    assert doc["pending"] == [{"pod": "team/big", "message": QUOTA_BIG, "job": "Pod/team/big"}]
    assert [p["pod"] for p in doc["placements"]] == ["team/q1-0", "team/q2-0"]
    # the Job's controller retries: q2 runs once q1 frees the quota, and keeps why it waited
    q2 = job(doc, "Job/team/q2")
    assert (q2["started_s"], q2["finished_s"], q2["message"]) == (1000.0, 1500.0, QUOTA_Q2)
    assert doc["summary"]["makespan_s"] is None


# -- 5. JSON details -------------------------------------------------------------------------


def test_jobs_keep_start_and_why_they_waited_and_preempted_work() -> None:
    doc = simulate("nodes2x4.yaml", "priority-never.yaml")
    never = job(doc, "Job/default/hi-never")
    assert (never["started_s"], never["finished_s"]) == (1800.0, 1900.0)
    assert never["message"] == (
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: not eligible due to "
        "preemptionPolicy=Never."
    )
    low_a = job(doc, "Job/default/low-a")
    assert (low_a["started_s"], low_a["finished_s"], low_a["evictions"]) == (0.0, 5500.0, 1)
    summary = doc["summary"]
    # low-a ran 600 s on 4 GPUs before hi preempted it: that work is redone
    assert summary["gpu_seconds_preempted"] == 2400.0
    assert summary["gpu_allocation"] == 0.8273
    assert summary["gpu_utilization"] == 0.7727  # 0.8273 - 2400 / (8 x 5500)


# -- 7. unusable inputs ------------------------------------------------------------------------


def test_simulate_cli_nothing_usable_prints_no_simulation() -> None:
    result = CliRunner().invoke(
        cli, ["simulate", "--cluster", str(FIX / "nodes2x4.yaml"), str(FIX / "bad.yaml")]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"gpuplane: {FIX / 'bad.yaml'}:2: invalid YAML: did not find expected node content\n"
        f"gpuplane: nothing usable in {FIX / 'bad.yaml'}\n"
    )


def test_simulate_cli_some_usable_simulates_then_exits_2() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "--cluster",
            str(FIX / "nodes2x4.yaml"),
            str(FIX / "bad.yaml"),
            str(FIX / "quota-bare-pod.yaml"),
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 2
    assert json.loads(result.stdout)["summary"]["scheduled"] == 2
    assert (
        result.stderr == f"gpuplane: {FIX / 'bad.yaml'}:2: invalid YAML: did not find expected node content\n"
    )


def test_simulate_cli_unusable_cluster_fails() -> None:
    result = CliRunner().invoke(
        cli, ["simulate", "--cluster", str(FIX / "bad.yaml"), str(FIX / "quota-bare-pod.yaml")]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.endswith(f"gpuplane: nothing usable in cluster source '{FIX / 'bad.yaml'}'\n")


def test_why_pending_unusable_cluster_fails() -> None:
    result = CliRunner().invoke(cli, ["why-pending", "--cluster", str(FIX / "bad.yaml")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"gpuplane: {FIX / 'bad.yaml'}:2: invalid YAML: did not find expected node content\n"
        f"gpuplane: nothing usable in cluster source '{FIX / 'bad.yaml'}'\n"
    )
