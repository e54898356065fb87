"""Autoscaling rules: the Karpenter taint and disk --fix patches, consolidation exemptions."""

from __future__ import annotations

import yaml
from rulehelpers import fixed_text, lint_rule

POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["0"]}
"""


def test_untainted_pool_fix_adds_gpu_taint() -> None:
    findings = lint_rule("karpenter-gpu-nodepool-untainted", POOL)
    assert [(f.line, f.field) for f in findings] == [(9, "spec.template.spec.requirements[0]")]
    fixed = yaml.safe_load(fixed_text("karpenter-gpu-nodepool-untainted", POOL))
    assert fixed["spec"]["template"]["spec"]["taints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert (
        lint_rule("karpenter-gpu-nodepool-untainted", fixed_text("karpenter-gpu-nodepool-untainted", POOL))
        == []
    )


def test_instance_types_and_startup_taints() -> None:
    by_type = POOL.replace(
        '{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["0"]}',
        "{key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}",
    )
    assert len(lint_rule("karpenter-gpu-nodepool-untainted", by_type)) == 1
    startup_only = POOL + "      startupTaints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n"
    assert len(lint_rule("karpenter-gpu-nodepool-untainted", startup_only)) == 1
    cpu = POOL.replace("instance-gpu-count, operator: Gt", "instance-gpu-count, operator: DoesNotExist")
    assert lint_rule("karpenter-gpu-nodepool-untainted", cpu) == []


def test_root_volume_fix_al2023_and_bottlerocket() -> None:
    al2023 = (
        POOL
        + """\
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
"""
    )
    fixed = list(yaml.safe_load_all(fixed_text("gpu-node-root-volume-small", al2023)))
    assert fixed[1]["spec"]["blockDeviceMappings"] == [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True}}
    ]
    bottlerocket = al2023.replace("al2023@v20240807", "bottlerocket@v1.20.4")
    fixed = list(yaml.safe_load_all(fixed_text("gpu-node-root-volume-small", bottlerocket)))
    assert [m["deviceName"] for m in fixed[1]["spec"]["blockDeviceMappings"]] == ["/dev/xvda", "/dev/xvdb"]
    assert fixed[1]["spec"]["blockDeviceMappings"][1]["ebs"]["volumeSize"] == "100Gi"
    raid = al2023 + "  instanceStorePolicy: RAID0\n"
    assert lint_rule("gpu-node-root-volume-small", raid) == []


TRAINING = """\
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {karpenter.sh/nodepool: other}
      containers: [{name: t, image: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]
"""


def test_consolidation_ignores_training_pinned_elsewhere() -> None:
    assert lint_rule("karpenter-consolidation-disrupts-training", POOL + TRAINING) == []
    here = TRAINING.replace("karpenter.sh/nodepool: other", "karpenter.sh/nodepool: gpu")
    findings = lint_rule("karpenter-consolidation-disrupts-training", POOL + here)
    assert [(f.line, f.field) for f in findings] == [(4, "spec")]
    assert "training pods of Job train lack karpenter.sh/do-not-disrupt" in findings[0].message
    when_empty = POOL + "  disruption: {consolidationPolicy: WhenEmpty}\n"
    assert lint_rule("karpenter-consolidation-disrupts-training", when_empty + here) == []


def test_gpu_limit_message() -> None:
    findings = lint_rule("karpenter-gpu-limit-missing", POOL)
    assert [(f.severity, f.field) for f in findings] == [("info", "spec")]
    assert (
        findings[0].fix
        == "Set spec.limits.nvidia.com/gpu to the most GPUs this pool may hold (e.g. nvidia.com/gpu: 32)."
    )
