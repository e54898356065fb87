"""Findings on TrainJob pods point at the object that wrote the field.

A TrainJob's pods come from its (Cluster)TrainingRuntime's JobSet template, with the
trainer's ``image``/``command``/``args``/``resourcesPerNode`` replacing those of the
``node`` container (kubeflow/trainer v2 pkg/runtime/framework/plugins/jobset/builder.go).
Regression: a request from ``resourcesPerNode`` was reported on the runtime's container line.
"""

from __future__ import annotations

from pathlib import Path

from rulehelpers import fixed_text, lint_rule

from gpuplane.lint.finding import SetValue

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lint" / "gpu-request-without-limit"

RUNTIME_WITH_REQUEST = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: torch
  namespace: ml
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      resources:
                        requests:
                          nvidia.com/gpu: 1
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job-a
  namespace: ml
spec:
  runtimeRef:
    name: torch
    kind: TrainingRuntime
  trainer:
    image: registry.example.com/train:2
"""


def test_resources_per_node_request_is_reported_on_the_trainjob() -> None:
    text = (FIXTURES / "fail-trainjob-resources-per-node.yaml").read_text()
    [finding] = lint_rule("gpu-request-without-limit", text)
    assert (finding.object.kind, finding.object.name) == ("TrainJob", "pytorch-distributed")
    assert finding.path == ("spec", "trainer", "resourcesPerNode", "requests", "nvidia.com/gpu")
    assert finding.line == 39
    # --fix writes the limit next to the request, in the TrainJob.
    assert finding.patch == (
        SetValue(("spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu"), "1"),
    )


def test_fix_adds_the_limit_to_resources_per_node() -> None:
    text = (FIXTURES / "fail-trainjob-resources-per-node.yaml").read_text()
    fixed = fixed_text("gpu-request-without-limit", text)
    assert fixed.split("---\n", 1)[0] == text.split("---\n", 1)[0]  # the runtime is untouched
    assert fixed.endswith(
        "    resourcesPerNode:\n"
        "      requests:\n"
        '        cpu: "4"\n'
        '        nvidia.com/gpu: "1"\n'
        "      limits:\n"
        "        nvidia.com/gpu: '1'\n"
    )


def test_runtime_fields_the_trainjob_does_not_override_stay_on_the_runtime() -> None:
    # The TrainJob overrides only the image: the runtime's own resources reach the pods.
    [finding] = lint_rule("gpu-request-without-limit", RUNTIME_WITH_REQUEST)
    assert (finding.object.kind, finding.object.name) == ("TrainingRuntime", "torch")
    assert finding.line == 20


def test_two_trainjobs_on_one_runtime_each_get_their_own_finding() -> None:
    text = (FIXTURES / "fail-trainjob-resources-per-node.yaml").read_text()
    second = text.split("---\n", 1)[1].replace("pytorch-distributed", "second-job")
    findings = lint_rule("gpu-request-without-limit", text + "---\n" + second)
    assert sorted((f.object.name, f.line) for f in findings) == [
        ("pytorch-distributed", 39),
        ("second-job", 54),
    ]
