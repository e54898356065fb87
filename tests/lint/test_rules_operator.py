"""Operator rules: ClusterPolicy checks with and without cluster context, DCGM --fix."""

from __future__ import annotations

import yaml
from rulehelpers import fixed_text, lint_rule

POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    config: {name: sharing-config, default: any}
  migManager:
    config: {name: custom-mig}
  dcgmExporter: {enabled: false}
"""


def test_missing_configmaps_need_cluster_configmaps() -> None:
    assert lint_rule("clusterpolicy-invalid", POLICY) == []  # ConfigMaps unknown: cannot tell
    cluster = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: kube-root-ca.crt, namespace: gpu-operator}
data: {ca.crt: x}
"""
    findings = lint_rule("clusterpolicy-invalid", POLICY, cluster)
    assert [(f.line, f.field) for f in findings] == [
        (6, "spec.devicePlugin.config.name"),
        (8, "spec.migManager.config.name"),
    ]
    assert findings[0].message == (
        "ClusterPolicy cluster-policy points the device-plugin at ConfigMap sharing-config, which exists neither "
        "in the input nor in the cluster: the operand cannot load its config."
    )


def test_mig_configmap_without_config_yaml() -> None:
    cms = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-mig, namespace: gpu-operator}
data: {mig.yaml: "version: v1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: sharing-config, namespace: gpu-operator}
data: {any: "version: v1"}
"""
    findings = lint_rule("clusterpolicy-invalid", POLICY + cms)
    assert [f.field for f in findings] == ["spec.migManager.config.name"]
    assert "has no config.yaml key" in findings[0].message


def test_unknown_strategy_quotes_api_error() -> None:
    text = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cp}\nspec:\n  mig: {strategy: auto}\n"
    findings = lint_rule("clusterpolicy-invalid", text)
    assert [f.message for f in findings] == [
        'ClusterPolicy cp: spec.mig.strategy: Unsupported value: "auto": supported values: "none", "single", '
        '"mixed" (the API server rejects the object).'
    ]


def test_mig_manager_disabled_with_cluster_nodes_asking_for_mig() -> None:
    text = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata: {name: cp}\nspec:\n  migManager: {enabled: false}\n"
    assert lint_rule("clusterpolicy-invalid", text) == []
    node = (
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {nvidia.com/mig.config: all-balanced}\n"
    )
    findings = lint_rule("clusterpolicy-invalid", text, node)
    assert [f.field for f in findings] == ["spec.migManager.enabled"]
    disabled = node.replace("all-balanced", "all-disabled")
    assert lint_rule("clusterpolicy-invalid", text, disabled) == []


def test_dcgm_fix() -> None:
    fixed = yaml.safe_load(fixed_text("dcgm-exporter-disabled", POLICY))
    assert fixed["spec"]["dcgmExporter"] == {"enabled": True}
