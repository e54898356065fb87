"""Sharing rules: exact messages, cluster-derived sharing, MIG geometry checks."""

from __future__ import annotations

from rulehelpers import lint_rule


def _pod(resource: str, count: int = 1, name: str = "p", namespace: str = "default") -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.08-py3
    resources:
      limits: {{{resource}: {count}}}
"""


def test_device_plugin_config_messages() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: dp, namespace: gpu-operator}
data:
  mps: |-
    version: v1
    sharing:
      mps:
        resources:
        - name: nvidia.com/gpu
"""
    findings = lint_rule("device-plugin-config-invalid", text)
    assert [(f.line, f.severity) for f in findings] == [(5, "error")]
    assert findings[0].message == (
        "Device-plugin config mps in ConfigMap gpu-operator/dp: sharing.mps.resources.0: no replicas specified "
        "(the plugin fails to load this config)"
    )


def test_shared_request_detected_from_node_replicas_label() -> None:
    cluster = """\
apiVersion: v1
kind: Node
metadata:
  name: t4-1
  labels: {nvidia.com/gpu.replicas: "4", nvidia.com/gpu.sharing-strategy: time-slicing}
status:
  allocatable: {nvidia.com/gpu: "16"}
"""
    assert lint_rule("shared-gpu-request-gt1", _pod("nvidia.com/gpu", 2)) == []  # whole GPUs without context
    findings = lint_rule("shared-gpu-request-gt1", _pod("nvidia.com/gpu", 2), cluster)
    assert [(f.line, f.field) for f in findings] == [
        (9, "spec.containers[0].resources.limits[nvidia.com/gpu]")
    ]
    unshared = cluster.replace('"4"', '"1"')
    assert lint_rule("shared-gpu-request-gt1", _pod("nvidia.com/gpu", 2), unshared) == []


def test_timeslicing_multi_tenant_silent_for_mps_only() -> None:
    pods = (
        _pod("nvidia.com/gpu.shared", 1, "a", "team-a")
        + "---\n"
        + _pod("nvidia.com/gpu.shared", 1, "b", "team-b")
    )
    assert len(lint_rule("timeslicing-multi-tenant", pods)) == 2
    mps = """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: dp, namespace: gpu-operator}
data:
  any: |-
    version: v1
    sharing:
      mps:
        renameByDefault: true
        resources:
        - {name: nvidia.com/gpu, replicas: 4}
"""
    assert lint_rule("timeslicing-multi-tenant", pods + mps) == []


def test_mig_profile_known_but_not_advertised() -> None:
    pod = _pod("nvidia.com/mig-3g.40gb")
    assert lint_rule("mig-profile-unknown", pod) == []
    cluster = """\
apiVersion: v1
kind: Node
metadata: {name: h100-1, labels: {nvidia.com/mig.strategy: mixed}}
status:
  allocatable: {nvidia.com/mig-1g.10gb: "56"}
"""
    findings = lint_rule("mig-profile-unknown", pod, cluster)
    assert [f.line for f in findings] == [9]
    assert "no node of the cluster advertises it" in findings[0].message
    advertised = cluster.replace("mig-1g.10gb", "mig-3g.40gb")
    assert lint_rule("mig-profile-unknown", pod, advertised) == []


def test_mig_config_device_filter_checks_that_model() -> None:
    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: mig, namespace: gpu-operator}
data:
  config.yaml: |-
    version: v1
    mig-configs:
      a100-40gb-bad:
      - device-filter: ["0x20B010DE"]
        devices: all
        mig-enabled: true
        mig-devices: {"3g.20gb": 3}
"""
    findings = lint_rule("mig-config-invalid", text)
    assert len(findings) == 1 and findings[0].line == 5
    assert "a100-40gb-bad[0] does not fit A100-40GB" in findings[0].message


def test_mig_multiple_devices_counts_mixed_profiles() -> None:
    text = _pod("nvidia.com/mig-1g.10gb").replace(
        "limits: {nvidia.com/mig-1g.10gb: 1}",
        "limits: {nvidia.com/mig-1g.10gb: 1, nvidia.com/mig-2g.20gb: 1}",
    )
    findings = lint_rule("mig-multiple-devices-per-container", text)
    assert [f.message for f in findings] == [
        'Pod default/p, container "c" asks for 2 MIG devices (nvidia.com/mig-1g.10gb: 1, nvidia.com/mig-2g.20gb: 1): a CUDA '
        "process uses only one MIG instance, so the others stay reserved and idle."
    ]
