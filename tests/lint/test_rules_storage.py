"""Storage rules: severities, context lookups and the --fix patch."""

from __future__ import annotations

import yaml
from rulehelpers import fixed_text, lint_rule

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: llm, namespace: serving}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.6.3
    resources: {limits: {nvidia.com/gpu: 1}}
    volumeMounts: [{name: cache, mountPath: /models}]
  volumes:
  - name: cache
    persistentVolumeClaim: {claimName: model-cache}
"""
PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: model-cache, namespace: serving}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 200Gi}}
"""
DEFAULT_SC = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: pd.csi.storage.gke.io
"""


def test_immediate_binding_default_class_and_fix() -> None:
    text = DEFAULT_SC + "---\n" + PVC + "---\n" + GPU_POD
    findings = lint_rule("storage-immediate-binding", text)
    # no volumeBindingMode: the default is Immediate; reported on the provisioner line
    assert [(f.object.kind, f.line, f.field) for f in findings] == [("StorageClass", 6, "provisioner")]
    fixed = list(yaml.safe_load_all(fixed_text("storage-immediate-binding", text)))
    assert fixed[0]["volumeBindingMode"] == "WaitForFirstConsumer"


def test_immediate_binding_class_from_cluster_reports_on_workload() -> None:
    findings = lint_rule("storage-immediate-binding", PVC + "---\n" + GPU_POD, DEFAULT_SC)
    assert [(f.object.kind, f.line, f.field) for f in findings] == [
        ("Pod", 19, "spec.volumes[0].persistentVolumeClaim.claimName")
    ]
    assert not findings[0].patch


def test_rwo_severity_depends_on_access_mode() -> None:
    two_replicas = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: serving}
spec:
  replicas: 2
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers: [{name: vllm, image: vllm/vllm-openai:v0.6.3}]
      volumes:
      - name: cache
        persistentVolumeClaim: {claimName: model-cache}
"""
    rwo = lint_rule("rwo-volume-shared", PVC + "---\n" + two_replicas)
    assert [(f.severity, f.line) for f in rwo] == [("warning", 20)]
    assert rwo[0].message.startswith(
        "PersistentVolumeClaim serving/model-cache is ReadWriteOnce but 2 pods mount it (Deployment serving/llm: 2) "
        "and they can land on "
        "different nodes"
    )
    rwop = lint_rule(
        "rwo-volume-shared", PVC.replace("ReadWriteOnce", "ReadWriteOncePod") + "---\n" + two_replicas
    )
    assert [f.severity for f in rwop] == ["error"]
    # the claim only known from the cluster snapshot
    assert [f.severity for f in lint_rule("rwo-volume-shared", two_replicas, PVC)] == ["warning"]
    # no PVC anywhere: access mode unknown, silent
    assert lint_rule("rwo-volume-shared", two_replicas) == []


def test_model_cache_needs_cache_like_mount() -> None:
    text = GPU_POD.replace("    persistentVolumeClaim: {claimName: model-cache}\n", "    emptyDir: {}\n")
    findings = lint_rule("model-cache-ephemeral-unbounded", text)
    assert [f.field for f in findings] == ["spec.volumes[0].emptyDir"]
    scratch = text.replace("mountPath: /models", "mountPath: /tmp").replace("name: cache", "name: tmp")
    assert lint_rule("model-cache-ephemeral-unbounded", scratch) == []


def test_shared_dataset_ignores_checkpoint_volumes() -> None:
    text = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: trainers}
spec:
  replicas: 3
  serviceName: trainers
  selector: {matchLabels: {app: t}}
  template:
    metadata: {labels: {app: t}}
    spec:
      containers:
      - name: t
        image: pytorch
        resources: {limits: {nvidia.com/gpu: 1}}
        volumeMounts:
        - {name: data, mountPath: /datasets/checkpoints}
      volumes:
      - name: data
        persistentVolumeClaim: {claimName: shared}
"""
    assert lint_rule("shared-dataset-writable", text) == []
    findings = lint_rule("shared-dataset-writable", text.replace("/datasets/checkpoints", "/datasets/coco"))
    assert [(f.line, f.severity) for f in findings] == [(16, "info")]
