"""Rule ``manifest-unknown-field``: unknown fields of GPU built-in workloads, strict schemas."""

from __future__ import annotations

import subprocess
import sys

from rulehelpers import lint_rule

RULE = "manifest-unknown-field"

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resources:
    limits: {cpu: "4"}
  containers:
  - name: c
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    resources:
      limits: {nvidia.com/gpu: 1}
    securityContext:
      allowPrivilegedEscalation: false
"""


def _cluster(kubelet: str) -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status:
  nodeInfo: {{kubeletVersion: {kubelet}}}
  allocatable: {{cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}}
"""


def test_kubectl_strict_wording_line_and_suggestion() -> None:
    (finding,) = [f for f in lint_rule(RULE, GPU_POD) if "allowPriv" in f.message]
    assert finding.line == 13
    assert finding.severity == "error"
    assert (
        '"Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
        '"spec.containers[0].securityContext.allowPrivilegedEscalation""'
    ) in finding.message
    assert "Kubernetes 1.36 API" in finding.message
    assert "drop it silently" in finding.message
    assert (
        finding.fix
        == "rename spec.containers[0].securityContext.allowPrivilegedEscalation to allowPrivilegeEscalation"
    )


def test_target_version_follows_the_cluster() -> None:
    # pod-level resources (spec.resources) are in the 1.36 schema, not in 1.30's
    assert [f.line for f in lint_rule(RULE, GPU_POD)] == [13]
    old = lint_rule(RULE, GPU_POD, cluster_text=_cluster("v1.30.2"))
    assert sorted(f.line for f in old) == [5, 13]
    assert all("Kubernetes 1.30 API" in f.message for f in old)
    # older than any bundled schema: the oldest bundled one
    assert all(
        "Kubernetes 1.25 API" in f.message for f in lint_rule(RULE, GPU_POD, cluster_text=_cluster("v1.20.0"))
    )


def test_one_finding_per_unknown_field_and_no_type_errors() -> None:
    text = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, labls: {a: b}}
spec:
  schedule: "0 1 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: x
            foo: 1
            bar: 2
            ports: [{containerPort: "not-a-number"}]
            resources: {limits: {nvidia.com/gpu: 1}}
"""
    findings = lint_rule(RULE, text)
    assert sorted(f.line for f in findings) == [3, 14, 15]
    assert any(
        'unknown field "spec.jobTemplate.spec.template.spec.containers[0].foo"' in f.message for f in findings
    )
    assert any(f.fix == "rename metadata.labls to labels" for f in findings)


def test_cpu_workloads_custom_resources_and_odd_values_are_skipped() -> None:
    cpu = GPU_POD.replace("nvidia.com/gpu: 1", "cpu: 1")
    assert lint_rule(RULE, cpu) == []
    crd = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j}
spec:
  whatever: 1
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    assert lint_rule(RULE, crd) == []
    # a YAML date where a string belongs is not an unknown field; the rule must not fail on it
    dated = GPU_POD.replace("metadata: {name: p}", "metadata: {name: p, annotations: {built: 2024-01-01}}")
    assert [f.line for f in lint_rule(RULE, dated)] == [13]


def test_help_does_not_import_the_schema_libraries() -> None:
    code = (
        "import sys\n"
        "from gpuplane.cli.entry import main\n"
        "sys.argv = ['gpuplane', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('jsonschema_rs', 'kubernetes_validate') if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED []" in proc.stderr
