"""pod-priority-set-directly: the Priority admission plugin's refusal, with its exact message
(kubernetes plugin/pkg/admission/priority/admission.go, admitPod), and the --fix that deletes
the field."""

from __future__ import annotations

from rulehelpers import fixed_text, lint_rule

PLACEHOLDER = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-placeholders
  namespace: default
spec:
  template:
    spec:
      priority: -1000  # low so real pods preempt it
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.9
"""


def test_message_is_the_admission_plugins() -> None:
    [finding] = lint_rule("pod-priority-set-directly", PLACEHOLDER)
    assert finding.line == 9
    assert finding.severity == "error"
    assert finding.message == (
        "Deployment default/gpu-placeholders sets spec.priority itself; the Priority admission plugin rejects its "
        'pods: "the integer value of priority (-1000) must not be provided in pod spec; priority admission '
        'controller computed 0 from the given PriorityClass name"'
    )


def test_global_default_and_system_classes_give_the_computed_value() -> None:
    default = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: d\nvalue: 7\nglobalDefault: true\n---\n"
    [finding] = lint_rule("pod-priority-set-directly", default + PLACEHOLDER)
    assert "computed 7 from the given PriorityClass name" in finding.message
    system = PLACEHOLDER.replace(
        "      priority:", "      priorityClassName: system-node-critical\n      priority:"
    )
    [finding] = lint_rule("pod-priority-set-directly", system)
    assert "computed 2000001000 from the given PriorityClass name" in finding.message


def test_fix_deletes_the_field() -> None:
    assert fixed_text("pod-priority-set-directly", PLACEHOLDER) == PLACEHOLDER.replace(
        "      priority: -1000  # low so real pods preempt it\n", ""
    )
