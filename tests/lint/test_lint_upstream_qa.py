"""Regression tests from a QA pass over real upstream GPU/AI manifests.

The inputs are copies of upstream examples (each keeps a ``# source:`` line) under
``tests/fixtures/lint/<rule>/`` and ``tests/fixtures/lint/_upstream_qa/``. Each test pins the
exact findings (rule, severity, line, field, message) that used to be false positives or
wrongly worded, plus the model changes behind them (KubeRay's /dev/shm, expansion problems,
mistyped selectors, folder walks).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpuplane.k8s.selectors import (
    label_selector_errors,
    label_selector_matches,
    node_selector_term_matches_labels,
)
from gpuplane.k8s.workloads import ExpansionProblem, expand_all
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import all_rules
from gpuplane.sources import load_paths
from gpuplane.sources.manifest import Manifest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
QA = FIXTURES / "_upstream_qa"


def _findings(path: Path, *rule_ids: str) -> list[tuple[str, str, int, str, str]]:
    loaded = load_paths([str(path)])
    assert not loaded.errors, loaded.errors
    rules = [m for m in all_rules() if m.id in rule_ids] if rule_ids else None
    result = run_lint(loaded.objects, config=LintConfig(), rules=rules)
    assert result.failures == []
    return [(f.rule, f.severity, f.line, f.field, f.message) for f in result.findings]


# -- 1. KubeRay mounts its own memory-backed /dev/shm ----------------------------------------


def test_kuberay_shm_is_modelled_on_the_podsets() -> None:
    loaded = load_paths([str(FIXTURES / "shm-too-small" / "pass-kuberay-rayjob.yaml")])
    podsets = {ps.name: ps for ps in expand_all(loaded.objects)}
    assert {name: ps.managed_shm for name, ps in podsets.items()} == {"head": "KubeRay", "submitter": None}
    pod = podsets["head"].pod()
    volume = next(v for v in pod.spec.volumes if v.name == "shared-mem")
    assert (volume.empty_dir.medium, volume.empty_dir.size_limit) == (
        "Memory",
        "8G",
    )  # the ray-head memory limit
    assert [(m.name, m.mount_path) for m in pod.spec.containers[0].volume_mounts][-1] == (
        "shared-mem",
        "/dev/shm",
    )
    assert podsets["head"].shm_managed(0) and not podsets["head"].shm_managed(1)


def test_kuberay_leaves_an_existing_shm_mount_alone() -> None:
    obj = Manifest(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": "r"},
            "spec": {
                "headGroupSpec": {
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "ray-head",
                                    "image": "rayproject/ray",
                                    "volumeMounts": [{"name": "mine", "mountPath": "/dev/shm"}],
                                }
                            ],
                            "volumes": [{"name": "mine", "emptyDir": {"medium": "Memory"}}],
                        }
                    }
                }
            },
        }
    )
    (head,) = expand_all([obj])
    assert not head.shm_managed(0)
    assert [v.name for v in head.pod().spec.volumes] == ["mine"]
    found = run_lint([obj], config=LintConfig(), rules=[m for m in all_rules() if m.id == "shm-unbounded"])
    assert [f.message for f in found.findings] == [
        "/dev/shm volume mine of head is memory-backed with no sizeLimit: it can grow to the node's memory and "
        "counts against the container's memory limit (OOMKilled)."
    ]


# -- 2. shm-too-small only where a framework uses shared memory -------------------------------


def test_shm_too_small_one_gpu_per_pod_without_dataloader_workers() -> None:
    # torchrun across two pods with one GPU each and no DataLoader workers stated: NCCL between pods
    # goes over the network, nothing fills the 64 MiB /dev/shm (issue 12: only real shm users)
    assert _findings(QA / "pytorchjob-deepspeed.yaml", "shm-too-small") == []


def test_shm_too_small_message() -> None:
    got = _findings(FIXTURES / "shm-too-small" / "fail.yaml", "shm-too-small")
    assert got[0][4] == (
        'Job finetune, container "trainer" (GPU training) has no memory-backed '
        '/dev/shm: it gets the 64 MiB container default, so PyTorch DataLoader workers die with "Bus error" and '
        "NCCL fails to extend /dev/shm."
    )


def test_shm_too_small_skips_gpu_jobs_without_a_framework() -> None:
    # LAMMPS under Flux, one GPU per node: no DataLoader / NCCL in sight
    assert _findings(QA / "trainjob-runtime-absent.yaml", "shm-too-small") == []


# -- 3./4. gang and zone findings count GPU pods, once per workload ---------------------------


def test_gang_scheduling_missing_counts_gpu_pods_only() -> None:
    msg = (
        "runs 2 GPU pods that must all run together, with no gang mechanism: kube-scheduler can bind some ranks "
        "and leave the rest Pending (Insufficient GPUs), so the bound ranks hold GPUs and hang in rendezvous."
    )
    assert _findings(
        FIXTURES / "gang-scheduling-missing" / "fail-mpijob-cpu-launcher.yaml", "gang-scheduling-missing"
    ) == [("gang-scheduling-missing", "warning", 6, "metadata.name", f"MPIJob nccl-tests {msg}")]
    assert _findings(
        FIXTURES / "gang-scheduling-missing" / "fail-byteps-cpu-servers.yaml", "gang-scheduling-missing"
    ) == [("gang-scheduling-missing", "warning", 6, "metadata.name", f"MXJob byteps-mxnet-job {msg}")]
    assert (
        _findings(
            FIXTURES / "gang-scheduling-missing" / "pass-kuberay-rayservice.yaml", "gang-scheduling-missing"
        )
        == []
    )


def test_training_spread_across_zones_once_per_workload() -> None:
    assert _findings(
        FIXTURES / "training-spread-across-zones" / "fail-pytorchjob-master-worker.yaml",
        "training-spread-across-zones",
    ) == [
        (
            "training-spread-across-zones",
            "warning",
            31,
            "spec.pytorchReplicaSpecs.Worker.template.spec",
            "PyTorchJob pytorch-dist-mnist-nccl runs 2 GPU pods (1 master, 1 worker) with nothing keeping them in "
            "one zone",
        )
    ]


# -- 5./6. TrainJob without its runtime: still an error, and fields that exist ------------------


def test_trainjob_without_runtime_request_without_limit_is_an_error() -> None:
    """resourcesPerNode replaces the runtime container's resources (kubeflow/trainer jobset
    builder.go, Builder.Trainer): the missing limit is rejected whatever the runtime declares."""
    assert _findings(
        FIXTURES / "gpu-request-without-limit" / "fail-trainjob-runtime-absent.yaml",
        "gpu-request-without-limit",
    ) == [
        (
            "gpu-request-without-limit",
            "error",
            53,
            "spec.trainer.resourcesPerNode.requests[nvidia.com/gpu]",
            'TrainJob grpo-example (node), container "node" requests nvidia.com/gpu: 2 without a limit; the API '
            'server rejects it ("Limit must be set for non overcommitable resources")',
        )
    ]


def test_synthetic_template_findings_point_at_real_fields() -> None:
    got = _findings(QA / "trainjob-runtime-absent.yaml")
    assert [(r, line, field) for r, _, line, field, _ in got] == [
        ("gang-scheduling-missing", 20, "metadata.name"),
        ("training-spread-across-zones", 25, "spec.trainer"),
        ("gpu-taint-not-tolerated", 25, "spec.trainer"),
    ]
    rayjob = _findings(FIXTURES / "shm-too-small" / "pass-kuberay-rayjob.yaml", "gpu-unrequested-cuda-image")
    assert [(line, field) for _, _, line, field, _ in rayjob] == [(10, "spec.entrypoint")]


# -- 8. expansion problems, typed command/args, robust selectors ------------------------------

_BAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  template: 5
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pj}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: 2, template: [a]}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: c, image: x, command: torchrun}
"""


def test_expansion_problems_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(_BAD)
    loaded = load_paths([str(bad)])
    problems: list[ExpansionProblem] = []
    podsets = expand_all(loaded.objects, problems=problems)
    assert [ps.name for ps in podsets] == ["p"]
    assert [(p.source.name, p.path, p.got) for p in problems] == [
        ("bad", ("spec", "template"), "number"),
        ("pj", ("spec", "pytorchReplicaSpecs", "Worker", "template"), "array"),
    ]
    assert _findings(bad, "pod-template-invalid") == [
        (
            "pod-template-invalid",
            "error",
            5,
            "spec.template",
            "Deployment bad: spec.template is a number where the API expects a pod template (a map): the API server "
            'rejects it: "Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number '
            "into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec\". gpuplane's other checks "
            "see no pods for it.",
        ),
        (
            "pod-template-invalid",
            "error",
            12,
            "spec.pytorchReplicaSpecs.Worker.template",
            "PyTorchJob pj: spec.pytorchReplicaSpecs.Worker.template is a list where the API expects a pod template "
            "(a map): the API server rejects it. gpuplane's other checks see no pods for it.",
        ),
        (
            "pod-template-invalid",
            "error",
            19,
            "spec.containers[0].command",
            "Pod p: spec.containers[0].command is a string where the API expects a list: the API server rejects it: "
            '"Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field '
            "Container.spec.containers.command of type []string\". gpuplane's other checks leave this field out.",
        ),
    ]


def test_expansion_failure_is_a_problem_not_a_traceback(monkeypatch) -> None:
    import importlib

    expand_module = importlib.import_module("gpuplane.k8s.workloads.expand")

    def broken(obj, ctx):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setitem(expand_module.EXPANDERS, ("ray.io", "RayCluster"), broken)
    obj = Manifest({"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "r"}, "spec": {}})
    problems: list[ExpansionProblem] = []
    assert expand_all([obj], problems=problems) == []
    assert [(p.path, p.got, p.detail) for p in problems] == [
        (("spec",), None, "OverflowError: cannot convert float infinity to integer")
    ]
    result = run_lint(
        [obj], config=LintConfig(), rules=[m for m in all_rules() if m.id == "pod-template-invalid"]
    )
    assert [f.message for f in result.findings] == [
        "RayCluster r: gpuplane cannot read its pods (OverflowError: cannot convert float infinity to integer): "
        "the object is malformed and gpuplane's other checks skip it."
    ]


def test_dict_selectors_never_raise_on_mistyped_requirements() -> None:
    labels = {"a": "b"}
    for selector in (
        {"matchExpressions": [{"key": ["a"], "operator": "In", "values": ["b"]}]},
        {"matchExpressions": {"key": "a", "operator": "Exists"}},
        {"matchExpressions": "a"},
        {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": "xyz"}]},
        {"matchExpressions": [5]},
        {"matchLabels": ["a"]},
    ):
        assert label_selector_matches(selector, labels) is False
        assert label_selector_errors(selector) == []
    assert (
        node_selector_term_matches_labels(
            {"matchExpressions": [{"key": {"a": 1}, "operator": "Exists"}]}, labels
        )
        is False
    )
    assert node_selector_term_matches_labels({"matchExpressions": {"key": "a"}}, labels) is False


# -- 10. folder walks skip Helm chart metadata and empty files --------------------------------


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuplane", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_folder_walk_skips_chart_metadata_and_empty_files(tmp_path: Path) -> None:
    chart = tmp_path / "charts" / "x"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("replicas: 1\n")
    (chart / "templates" / "empty.yaml").write_text("")
    (chart / "templates" / "notes.yaml").write_text("# nothing rendered\n")
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    walked = _run("lint", "charts", cwd=tmp_path)
    assert walked.returncode == 0
    assert walked.stderr.splitlines() == [
        "gpuplane: skipped charts/x/Chart.yaml (Helm chart metadata, not a manifest)",
        "gpuplane: skipped charts/x/values.yaml (Helm chart metadata, not a manifest)",
        "gpuplane: skipped charts/x/templates/empty.yaml (empty file)",
        "gpuplane: skipped charts/x/templates/notes.yaml (only comments, no objects)",
    ]
    named = _run("lint", "charts/x/Chart.yaml", cwd=tmp_path)
    assert named.returncode == 2
    assert named.stderr.splitlines() == ["charts/x/Chart.yaml:1: object has no kind"]
