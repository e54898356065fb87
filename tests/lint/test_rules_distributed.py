"""Distributed-training rules: exact messages, --fix patches and context behaviour."""

from __future__ import annotations

import yaml
from rulehelpers import fixed_text, lint_rule

TRAIN_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.08-py3
        resources:
          limits: {nvidia.com/gpu: 2, memory: 8Gi}
      - name: sidecar
        image: busybox:1.36
"""


def test_shm_too_small_fix_adds_memory_volume_and_mount() -> None:
    findings = lint_rule("shm-too-small", TRAIN_JOB)
    assert [(f.line, f.field) for f in findings] == [(11, "spec.template.spec.containers[0].name")]
    assert findings[0].message == (
        'Job finetune, container "trainer" (GPU training) has no memory-backed /dev/shm: it gets the 64 MiB container '
        'default, so PyTorch DataLoader workers die with "Bus error" and NCCL fails to extend /dev/shm.'
    )
    fixed = yaml.safe_load(fixed_text("shm-too-small", TRAIN_JOB))
    spec = fixed["spec"]["template"]["spec"]
    # sizeLimit: half of the 8Gi memory limit (the tmpfs is charged to it)
    assert spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert "volumeMounts" not in spec["containers"][1]
    assert lint_rule("shm-too-small", fixed_text("shm-too-small", TRAIN_JOB)) == []


def test_shm_too_small_skips_host_ipc_and_single_gpu_serving() -> None:
    host_ipc = TRAIN_JOB.replace(
        "      restartPolicy: Never\n", "      restartPolicy: Never\n      hostIPC: true\n"
    )
    assert lint_rule("shm-too-small", host_ipc) == []
    serving = """\
apiVersion: v1
kind: Pod
metadata: {name: embed}
spec:
  containers:
  - name: tei
    image: ghcr.io/huggingface/text-embeddings-inference:1.5
    resources: {limits: {nvidia.com/gpu: 1}}
"""
    assert lint_rule("shm-too-small", serving) == []


def test_shm_unbounded_fix_sets_size_limit() -> None:
    text = TRAIN_JOB.replace(
        "      - name: sidecar\n        image: busybox:1.36\n",
        "        volumeMounts: [{name: dshm, mountPath: /dev/shm}]\n"
        "      volumes:\n      - name: dshm\n        emptyDir: {medium: Memory}\n",
    )
    findings = lint_rule("shm-unbounded", text)
    assert [f.field for f in findings] == ["spec.template.spec.volumes[0].emptyDir"]
    fixed = yaml.safe_load(fixed_text("shm-unbounded", text))
    assert fixed["spec"]["template"]["spec"]["volumes"][0]["emptyDir"] == {
        "medium": "Memory",
        "sizeLimit": "4Gi",
    }


PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: resnet}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 3
      template:
        spec:
          containers: [{name: pytorch, image: pytorch}]
"""


def test_pytorchjob_master_replicas_message_and_fix() -> None:
    findings = lint_rule("pytorchjob-master-replicas", PYTORCHJOB)
    assert [(f.severity, f.line) for f in findings] == [("error", 7)]
    assert findings[0].message == (
        "PyTorchJob resnet: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1 (got 3); "
        "there is exactly one rank-0 master."
    )
    fixed = yaml.safe_load(fixed_text("pytorchjob-master-replicas", PYTORCHJOB))
    assert fixed["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1


def test_gang_min_exceeds_quotes_volcano_webhook() -> None:
    text = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  minAvailable: 3
  tasks:
  - name: worker
    replicas: 2
    template:
      spec:
        containers: [{name: w, image: pytorch, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    findings = lint_rule("gang-min-exceeds-replicas", text)
    assert [f.message for f in findings] == [
        "Job train: job gang minimum 3 is larger than its 2 pod(s): never schedulable "
        "(job 'minAvailable' should not be greater than total replicas in tasks)."
    ]
    assert yaml.safe_load(fixed_text("gang-min-exceeds-replicas", text))["spec"]["minAvailable"] == 2


def test_gang_min_uses_podgroup_objects() -> None:
    text = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: ml}
spec: {minMember: 5}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 4
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: pg}
    spec:
      schedulerName: scheduler-plugins-scheduler
      restartPolicy: Never
      containers: [{name: t, image: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]
"""
    findings = lint_rule("gang-min-exceeds-replicas", text)
    assert [(f.object.kind, f.line) for f in findings] == [("PodGroup", 4)]
    assert lint_rule("gang-scheduling-missing", text) == []


def test_gang_scheduling_missing_lws_group_size() -> None:
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: llama-405b}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: 8}}}]
"""
    findings = lint_rule("gang-scheduling-missing", text)
    assert [f.line for f in findings] == [3]
    assert findings[0].message.startswith(
        "LeaderWorkerSet llama-405b runs 2 GPU pods that must all run together"
    )


def test_scheduler_not_installed_needs_cluster_evidence() -> None:
    pod = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: volcano
  containers: [{name: c, image: pytorch}]
"""
    assert lint_rule("scheduler-not-installed", pod) == []  # no --cluster: silent
    empty_cluster = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
    assert lint_rule("scheduler-not-installed", pod, empty_cluster) == []  # no pods: cannot know
    volcano = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: volcano-scheduler, namespace: volcano-system}
spec:
  selector: {matchLabels: {app: volcano-scheduler}}
  template:
    metadata: {labels: {app: volcano-scheduler}}
    spec:
      containers: [{name: s, image: docker.io/volcanosh/vc-scheduler:v1.11.0}]
"""
    assert lint_rule("scheduler-not-installed", pod, volcano) == []
    other = volcano.replace("vc-scheduler", "nginx")
    findings = lint_rule("scheduler-not-installed", pod, other)
    assert [(f.line, f.field) for f in findings] == [(5, "spec.schedulerName")]


def test_indexed_job_partial_parallelism_fix() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  completionMode: Indexed
  completions: 4
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: t
        image: pytorch
        env: [{name: MASTER_ADDR, value: train-0.train}]
        resources: {limits: {nvidia.com/gpu: 8}}
"""
    assert yaml.safe_load(fixed_text("indexed-job-partial-parallelism", text))["spec"]["parallelism"] == 4


def test_gang_queue_missing_volcano_closed_queue() -> None:
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  queue: research
  tasks:
  - name: w
    replicas: 2
    template:
      spec:
        containers: [{name: w, image: pytorch, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    cluster = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 1}
status: {state: Closed}
"""
    findings = lint_rule("gang-queue-missing", job, cluster)
    assert [(f.line, f.field) for f in findings] == [(5, "spec.queue")]
    assert "Volcano Queue research is Closed" in findings[0].message
    assert lint_rule("gang-queue-missing", job, cluster.replace("Closed", "Open")) == []
