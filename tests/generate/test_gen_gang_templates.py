"""Gang-safe TrainJob, RayJob and LeaderWorkerSet templates under Volcano, coscheduling and Kueue
(issue 16 item 4): the gang minimum the controller computes equals the pods it creates before the
gang must run, each combination names its scheduler and queue the way the controller reads them,
and the output validates against the upstream CRDs and lints clean. Each assertion cites the
controller source that decides it (docs/generate.md, "Gang scheduling")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.generate.blueprint import BlueprintError, parse_blueprint
from gpuplane.generate.engine import generate, render_blueprint
from gpuplane.generate.output import write_bundle
from gpuplane.generate.render.base import Bundle

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "examples" / "blueprints" / "onprem-dgx-mig.yaml"

TRAINJOB = {"name": "llm", "tenant": "vision", "kind": "trainjob", "pool": "dgx-train", "workers": 3}
RAYJOB = {"name": "ray-train", "tenant": "nlp", "kind": "rayjob", "pool": "dgx-train", "workers": 3}
LWS = {
    "name": "llama-405b",
    "tenant": "vision",
    "pool": "dgx-train",
    "model": "meta-llama/Llama-3.1-405B-Instruct",
    "gpus": 8,
    "nodes": 2,
    "min_replicas": 1,
    "max_replicas": 2,
}


def _data(scheduler: str, training: list[dict[str, Any]], inference: list[dict[str, Any]]) -> dict[str, Any]:
    data = yaml.safe_load(BASE.read_text())
    data["scheduler"] = {"name": scheduler}
    data["workloads"] = {
        "training": [{**w, "gpus_per_worker": 8} for w in training],
        "inference": inference,
    }
    return data


def _render(scheduler: str, training: list[dict[str, Any]], inference: list[dict[str, Any]]) -> Bundle:
    return render_blueprint(parse_blueprint(_data(scheduler, training, inference)))


def _obj(bundle: Bundle, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in bundle.all_objects() if o["kind"] == kind and o["metadata"]["name"] == name)


def _kinds(bundle: Bundle) -> set[str]:
    return {o["kind"] for o in bundle.all_objects()}


def _release(bundle: Bundle, name: str) -> Any:
    return next(r for r in bundle.releases if r.release == name)


def _runtime_pod(bundle: Bundle, name: str) -> dict[str, Any]:
    rj = _obj(bundle, "TrainingRuntime", name)["spec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in rj] == ["node"]
    return rj[0]["template"]["spec"]["template"]


# --- TrainJob (Kubeflow Trainer v2.3.0) ---------------------------------------------------------


def test_trainjob_under_volcano_uses_the_runtime_podgroup_policy() -> None:
    b = _render("volcano", [TRAINJOB], [])
    runtime = _obj(b, "TrainingRuntime", "llm")["spec"]
    # The trainer's PodGroup minMember = the sum of PodSet counts = numNodes trainer pods
    # (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/volcano/volcano.go Build).
    assert runtime["podGroupPolicy"] == {"volcano": {}}
    assert runtime["mlPolicy"] == {"numNodes": 3, "torch": {}}
    # Queue: annotation scheduling.volcano.sh/queue-name on the runtime's template (docs/operator-guides/
    # job-scheduling/volcano.md); the trainer does not set the pod's scheduler, the template does.
    assert runtime["template"]["metadata"] == {"annotations": {"scheduling.volcano.sh/queue-name": "vision"}}
    pod = _runtime_pod(b, "llm")
    assert pod["spec"]["schedulerName"] == "volcano"
    # The torch plugin fills the container named "node" of the replicated Job "node" (plugins/torch/torch.go).
    assert [c["name"] for c in pod["spec"]["containers"]] == ["node"]
    job = _obj(b, "TrainJob", "llm")["spec"]
    assert job["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "llm"}
    assert job["trainer"]["numNodes"] == 3 and job["trainer"]["numProcPerNode"] == 8
    assert job["trainer"]["command"][:4] == [
        "torchrun",
        "--nnodes=3",
        "--nproc-per-node=8",
        "--node-rank=$(PET_NODE_RANK)",
    ]
    # No PodGroup of gpuplane's: the trainer creates it (an extra one would be a second gang).
    assert "PodGroup" not in _kinds(b)


def test_trainjob_under_coscheduling_names_the_second_scheduler() -> None:
    b = _render("coscheduling", [TRAINJOB], [])
    runtime = _obj(b, "TrainingRuntime", "llm")["spec"]
    assert runtime["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    assert "metadata" not in runtime["template"]
    pod = _runtime_pod(b, "llm")
    assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    # plugins/coscheduling/coscheduling.go labels the pods itself with scheduling.x-k8s.io/pod-group.
    assert "scheduling.x-k8s.io/pod-group" not in pod["metadata"]["labels"]
    assert "PodGroup" not in _kinds(b)


def test_trainjob_under_kueue_is_admitted_by_its_queue_label() -> None:
    b = _render("kueue", [TRAINJOB], [])
    assert _obj(b, "TrainJob", "llm")["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "vision"
    runtime = _obj(b, "TrainingRuntime", "llm")["spec"]
    assert "podGroupPolicy" not in runtime
    assert "schedulerName" not in _runtime_pod(b, "llm")["spec"]


def test_trainer_install_brings_jobset_once() -> None:
    jobset = {**TRAINJOB, "name": "js", "kind": "jobset"}
    b = _render("kueue", [TRAINJOB, jobset], [])
    refs = [m.ref for m in b.shared["manifests"]]
    # kubeflow/trainer v2.3.0 manifests/overlays/manager includes manifests/third-party/jobset (v0.12.0).
    assert refs == ["github.com/kubeflow/trainer.git/manifests/overlays/manager?ref=v2.3.0"]


# --- RayJob (KubeRay v1.7.0) ----------------------------------------------------------------------


def _ray_pods(job: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    cluster = job["spec"]["rayClusterSpec"]
    pods = [("head", 1, cluster["headGroupSpec"]["template"])]
    for g in cluster.get("workerGroupSpecs", []):
        assert g["replicas"] == g["minReplicas"] == g["maxReplicas"]  # no autoscaling: the gang is fixed
        pods.append((g["groupName"], g["replicas"], g["template"]))
    return pods


def test_rayjob_under_volcano_gangs_head_and_workers_without_a_submitter() -> None:
    b = _render("volcano", [RAYJOB], [])
    job = _obj(b, "RayJob", "ray-train")
    # KubeRay's PodGroup: minMember = head + desired workers (batchscheduler/volcano/volcano_scheduler.go
    # calculatePodGroupParams); HTTPMode has no submitter pod, so every pod is a GPU rank.
    pods = _ray_pods(job)
    assert [(name, n) for name, n, _ in pods] == [("head", 1), ("gpu", 2)]
    assert all(t["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8 for _, _, t in pods)
    assert all(t["spec"]["schedulerName"] == "volcano" for _, _, t in pods)
    assert job["spec"]["submissionMode"] == "HTTPMode"
    # createPodGroup reads the queue and priority from the RayJob's labels.
    labels = job["metadata"]["labels"]
    assert labels["volcano.sh/queue-name"] == "nlp"
    assert labels["ray.io/priority-class-name"] == "gpuplane-research"
    assert _release(b, "kuberay-operator").values == {"batchScheduler": {"name": "volcano"}}


def test_rayjob_under_kueue_deletes_its_cluster_when_done() -> None:
    b = _render("kueue", [RAYJOB], [])
    job = _obj(b, "RayJob", "ray-train")
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "nlp"
    # kueue v0.19.2 pkg/controller/jobs/rayjob/rayjob_webhook.go: "a kueue managed job should delete
    # the cluster after finishing".
    assert job["spec"]["shutdownAfterJobFinishes"] is True
    assert all("schedulerName" not in t["spec"] for _, _, t in _ray_pods(job))
    assert _release(b, "kuberay-operator").values == {}


def test_rayjob_under_coscheduling_is_refused() -> None:
    # kuberay v1.7.0 batchscheduler/scheduler-plugins/scheduler_plugins.go DoBatchSchedulingOnSubmission:
    # "currently only RayCluster is supported".
    with pytest.raises(BlueprintError) as exc:
        render_blueprint(parse_blueprint(_data("coscheduling", [RAYJOB], [])))
    assert exc.value.problems == [
        "workloads.training[0].kind: KubeRay 1.7's scheduler-plugins integration gang-schedules RayClusters "
        "only: a RayJob is refused by it and never gets its cluster; use scheduler volcano or kueue for rayjob"
    ]


def test_rayjob_uses_a_ray_image_unless_given_one() -> None:
    b = _render("kueue", [RAYJOB, {**RAYJOB, "name": "own", "image": "registry.example/ray:mine"}], [])
    images = {
        n: _obj(b, "RayJob", n)["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][
            0
        ]["image"]
        for n in ("ray-train", "own")
    }
    assert images == {"ray-train": "rayproject/ray:2.52.0-gpu", "own": "registry.example/ray:mine"}


# --- LeaderWorkerSet (LWS v0.10.0) -----------------------------------------------------------------


def test_multi_node_serving_under_volcano_is_one_podgroup_per_group() -> None:
    b = _render("volcano", [], [LWS])
    lws = _obj(b, "LeaderWorkerSet", "llama-405b")
    spec = lws["spec"]
    # pkg/schedulerprovider/volcano_provider.go: minMember = size with LeaderCreated (1 with LeaderReady,
    # whose workers are created after the leader is Ready).
    assert spec["startupPolicy"] == "LeaderCreated"
    tmpl = spec["leaderWorkerTemplate"]
    assert tmpl["size"] == 2 and tmpl["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert (
        tmpl["leaderTemplate"]["spec"]["schedulerName"]
        == tmpl["workerTemplate"]["spec"]["schedulerName"]
        == "volcano"
    )
    assert lws["metadata"]["annotations"] == {"scheduling.volcano.sh/queue-name": "vision"}
    assert "--pipeline-parallel-size 2" in tmpl["leaderTemplate"]["spec"]["containers"][0]["command"][2]
    assert _release(b, "lws").values == {
        "image": {"manager": {"tag": "v0.10.0", "pullPolicy": "IfNotPresent"}},
        "gangSchedulingManagement": {"schedulerProvider": "volcano"},
    }
    hpa = _obj(b, "HorizontalPodAutoscaler", "llama-405b")["spec"]["scaleTargetRef"]
    assert hpa == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": "llama-405b",
    }
    svc = _obj(b, "Service", "llama-405b")["spec"]["selector"]
    assert svc == {"app.kubernetes.io/name": "llama-405b", "role": "leader"}
    assert "Deployment" not in _kinds(b)


def test_multi_node_serving_under_kueue_is_admitted_per_group() -> None:
    b = _render("kueue", [], [LWS])
    lws = _obj(b, "LeaderWorkerSet", "llama-405b")
    assert lws["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "vision"
    assert "annotations" not in lws["metadata"]
    assert "gangSchedulingManagement" not in _release(b, "lws").values


def test_multi_node_serving_under_coscheduling_is_refused() -> None:
    with pytest.raises(BlueprintError) as exc:
        render_blueprint(parse_blueprint(_data("coscheduling", [], [LWS])))
    assert exc.value.problems == [
        "workloads.inference[0].nodes: LeaderWorkerSet 0.10 has no coscheduling provider (Volcano only): its "
        "groups would not be gang-scheduled; use scheduler volcano or kueue for multi-node serving"
    ]


def test_multi_node_serving_needs_whole_gpus() -> None:
    with pytest.raises(BlueprintError) as exc:
        render_blueprint(parse_blueprint(_data("kueue", [], [{**LWS, "pool": "dgx-mig", "gpus": 1}])))
    assert (
        "workloads.inference[0].nodes: a multi-node replica needs whole GPUs; dgx-mig shares them (mig)"
        in (exc.value.problems)
    )


# --- every combination validates and lints clean ------------------------------------------------

COMBINATIONS = {
    "volcano": ([TRAINJOB, RAYJOB], [LWS]),
    "kueue": ([TRAINJOB, RAYJOB], [LWS]),
    "coscheduling": ([TRAINJOB], []),
}


@pytest.mark.parametrize("scheduler", sorted(COMBINATIONS))
def test_combinations_validate_against_upstream_crds(scheduler: str, shared_dir: Path) -> None:
    bp = parse_blueprint(_data(scheduler, *COMBINATIONS[scheduler]))
    result = generate(bp, shared_dir / "corpus" / "crds")
    assert result.schema_errors == []
    # TrainingRuntime, TrainJob, RayJob and LeaderWorkerSet are all checked against their CRDs.
    assert result.unchecked_kinds == ["mellanox.com/v1alpha1/NicClusterPolicy"]


@pytest.mark.parametrize("scheduler", sorted(COMBINATIONS))
def test_combinations_lint_clean(scheduler: str, tmp_path: Path) -> None:
    write_bundle(generate(parse_blueprint(_data(scheduler, *COMBINATIONS[scheduler]))).bundle, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplane", "lint", str(tmp_path), "-f", "json", "--fail-on", "warning"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["summary"]["findings"] == 0
