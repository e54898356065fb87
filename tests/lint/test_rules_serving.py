"""Serving rules: startup-probe and rollout --fix patches, HPA/KEDA detection, pull policy defaults."""

from __future__ import annotations

import yaml
from rulehelpers import fixed_text, lint_rule

SERVER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  replicas: 2
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.3
        ports: [{containerPort: 8000}]
        resources: {limits: {nvidia.com/gpu: 1}}
        livenessProbe:
          httpGet: {path: /health, port: 8000}
          timeoutSeconds: 5
"""


def test_startup_probe_fix_copies_liveness_handler() -> None:
    findings = lint_rule("inference-no-startup-probe", SERVER)
    assert [(f.line, f.field) for f in findings] == [(15, "spec.template.spec.containers[0].livenessProbe")]
    assert findings[0].message == (
        'Deployment llm, container "vllm" (GPU server) has a livenessProbe that kills it after 30s and no startupProbe: the '
        "server cannot answer while it loads model weights, so it is restarted in a loop (CrashLoopBackOff) and "
        "never serves."
    )
    container = yaml.safe_load(fixed_text("inference-no-startup-probe", SERVER))["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["startupProbe"] == {
        "httpGet": {"path": "/health", "port": 8000},
        "periodSeconds": 10,
        "failureThreshold": 60,
        "timeoutSeconds": 5,
    }
    assert lint_rule("inference-no-startup-probe", fixed_text("inference-no-startup-probe", SERVER)) == []


def test_short_startup_probe_is_raised() -> None:
    text = SERVER.replace(
        "        livenessProbe:",
        "        startupProbe:\n          tcpSocket: {port: 8000}\n"
        "          periodSeconds: 5\n          failureThreshold: 12\n        livenessProbe:",
    )
    findings = lint_rule("inference-no-startup-probe", text)
    assert [f.field for f in findings] == ["spec.template.spec.containers[0].startupProbe"]
    probe = yaml.safe_load(fixed_text("inference-no-startup-probe", text))["spec"]["template"]["spec"][
        "containers"
    ][0]["startupProbe"]
    assert probe["failureThreshold"] == 120  # 120 x 5s = 600s


def test_rollout_fix_replaces_in_place() -> None:
    # without a cluster only an explicit maxUnavailable 0 is reported (the defaults are no decision)
    explicit = SERVER.replace(
        "  replicas: 2\n", "  replicas: 2\n  strategy: {rollingUpdate: {maxUnavailable: 0}}\n"
    )
    assert lint_rule("gpu-rollout-surge-deadlock", SERVER) == []
    fixed = yaml.safe_load(fixed_text("gpu-rollout-surge-deadlock", explicit))
    assert fixed["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    assert lint_rule("gpu-rollout-surge-deadlock", fixed_text("gpu-rollout-surge-deadlock", explicit)) == []


def test_rollout_silent_when_cluster_has_spare_gpus() -> None:
    node = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
"""
    assert lint_rule("gpu-rollout-surge-deadlock", SERVER, node) == []
    full = (
        node
        + """\
---
apiVersion: v1
kind: Pod
metadata: {name: hog, namespace: default}
spec:
  nodeName: gpu-1
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
status: {phase: Running}
"""
    )
    assert len(lint_rule("gpu-rollout-surge-deadlock", SERVER, full)) == 1


def test_hpa_default_metric_and_keda() -> None:
    hpa = """\
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: llm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: llm}
  maxReplicas: 4
"""
    findings = lint_rule("hpa-cpu-for-gpu-serving", SERVER + hpa)
    assert [f.field for f in findings] == ["spec.scaleTargetRef"]  # no metrics: 80% CPU default
    keda = """\
---
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: llm}
spec:
  scaleTargetRef: {name: llm}
  triggers:
  - type: cpu
    metricType: Utilization
    metadata: {value: "60"}
"""
    assert [f.message.split(":")[0] for f in lint_rule("hpa-cpu-for-gpu-serving", SERVER + keda)] == [
        "KEDA ScaledObject llm scales GPU Deployment llm on CPU/memory only"
    ]
    prom = keda.replace("type: cpu", "type: prometheus")
    assert lint_rule("hpa-cpu-for-gpu-serving", SERVER + prom) == []


def test_image_pull_fix_only_for_pinned_tags() -> None:
    pinned = SERVER.replace("        ports:", "        imagePullPolicy: Always\n        ports:")
    fixed = yaml.safe_load(fixed_text("image-pull-always-large", pinned))
    assert fixed["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    latest = pinned.replace("v0.6.3", "latest")
    findings = lint_rule("image-pull-always-large", latest)
    assert len(findings) == 1 and not findings[0].patch
    assert lint_rule("image-pull-always-large", SERVER) == []  # pinned tag, default policy IfNotPresent
