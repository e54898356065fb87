"""Render exported rules as admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy objects.

One policy and one binding per rule and admission action: ``error`` checks deny the request
(``validationActions: [Deny]``), ``warning`` and ``info`` checks return a warning to the client
(``[Warn]``: kubectl prints it, the object is admitted). A rule whose checks have both kinds of
severity gets two policies (``gpuplane-<rule>`` and ``gpuplane-<rule>-warn``).

Semantics relied on (kubernetes/kubernetes
``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating``; API reference of
``ValidatingAdmissionPolicySpec``): ``variables`` are evaluated lazily in order and read as
``variables.<name>``; ``matchConditions`` must all be true for the validations to run; a
validation passes when its expression is true, else ``messageExpression`` (falling back to
``message`` when it fails) is returned; ``failurePolicy`` decides what an evaluation *error* does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gpuplane.policy import cel
from gpuplane.policy.catalog import EXPORTED, Check, ExportedRule

API_VERSION = "admissionregistration.k8s.io/v1"
NAME_PREFIX = "gpuplane-"
RULE_LABEL = "gpuplane.io/rule"

# Pods created by a controller were checked when their controller object was admitted (lint flags
# the controller, not its pods); checking them again would repeat every warning per pod and, for a
# Deny rule, fail the controller's pod creation instead of the user's apply.
SKIP_CONTROLLED_PODS = (
    "object.kind != 'Pod' || !has(object.metadata.ownerReferences) || "
    "!object.metadata.ownerReferences.exists(o, has(o.controller) && o.controller == true)"
)
# An UPDATE that leaves the spec as it was (labels, annotations, a controller's bookkeeping) is
# not re-judged: an object admitted before the policy existed can still be managed.
SPEC_CHANGED = "request.operation != 'UPDATE' || !has(oldObject.spec) || !has(object.spec) || oldObject.spec != object.spec"


def cel_string(text: str) -> str:
    """A CEL single-quoted string literal of ``text``."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def action_of(severity: str) -> str:
    return "Deny" if severity == "error" else "Warn"


def _object_label() -> str:
    return (
        "object.kind + ' ' + (has(object.metadata.name) ? object.metadata.name : "
        "(has(object.metadata.generateName) ? object.metadata.generateName + '*' : '(unnamed)'))"
    )


def _validation(rule_id: str, check: Check) -> dict[str, Any]:
    suffix = f". Fix: {check.fix} (gpuplane explain {rule_id})"
    return {
        "expression": check.expression,
        "messageExpression": f"{cel_string(rule_id + ': ')} + {_object_label()} + ' ' + {check.detail} + "
        f"{cel_string(suffix)}",
        "message": f"{rule_id}: {check.message}{suffix}",
        "reason": "Invalid",
    }


def _resource_rules(kinds: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    by_group: dict[str, list[str]] = {}
    for group, kind in kinds:
        plural = cel.RESOURCES[(group, kind)]
        names = by_group.setdefault(group, [])
        if plural not in names:
            names.append(plural)
    return [
        {
            "apiGroups": [group],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": sorted(names),
        }
        for group, names in by_group.items()
    ]


def policy_name(rule: ExportedRule, action: str) -> str:
    """``gpuplane-<rule>``; the Warn half of a rule with both actions gets ``-warn``."""
    actions = {action_of(c.severity) for c in rule.checks}
    base = NAME_PREFIX + rule.id
    return base + "-warn" if action == "Warn" and len(actions) > 1 else base


def policies_for(rule: ExportedRule) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(policy, binding)`` pairs for ``rule``: one per admission action its checks need."""
    out = []
    for action in ("Deny", "Warn"):
        checks = [c for c in rule.checks if action_of(c.severity) == action]
        if not checks:
            continue
        name = policy_name(rule, action)
        severity = "error" if action == "Deny" else checks[0].severity
        variables: list[dict[str, str]] = []
        if rule.uses_pod_specs:
            variables.append({"name": "podSpecs", "expression": cel.pod_specs(list(rule.kinds))})
        for check in checks:
            variables.extend({"name": n, "expression": e} for n, e in check.variables)
        conditions = [{"name": "spec-changed", "expression": SPEC_CHANGED}]
        if ("", "Pod") in rule.kinds:
            conditions.insert(0, {"name": "not-a-controller-pod", "expression": SKIP_CONTROLLED_PODS})
        labels = {"app.kubernetes.io/managed-by": "gpuplane", RULE_LABEL: rule.id}
        metadata: dict[str, Any] = {
            "name": name,
            "labels": labels,
            "annotations": {
                "gpuplane.io/severity": severity,
                "gpuplane.io/docs": f"gpuplane explain {rule.id}",
            },
        }
        spec: dict[str, Any] = {
            # An evaluation error (an object shaped unlike anything the policy was tested on) admits
            # the object: a guardrail must never be what blocks a deploy by its own failure.
            "failurePolicy": "Ignore",
            "matchConstraints": {"resourceRules": _resource_rules(rule.kinds)},
            "matchConditions": conditions,
        }
        if variables:
            spec["variables"] = variables
        spec["validations"] = [_validation(rule.id, c) for c in checks]
        policy = {
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": metadata,
            "spec": spec,
        }
        binding = {
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name, "labels": dict(labels)},
            "spec": {"policyName": name, "validationActions": [action]},
        }
        out.append((policy, binding))
    return out


def export_objects(rule_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Policies and bindings for ``rule_ids`` (every exported rule when None), policy then its
    binding, in catalog order. Unknown or non-exportable ids raise ``KeyError`` naming them."""
    if rule_ids is None:
        chosen = list(EXPORTED.values())
    else:
        wanted = list(dict.fromkeys(rule_ids))
        missing = [r for r in wanted if r not in EXPORTED]
        if missing:
            raise KeyError(", ".join(missing))
        chosen = [EXPORTED[r] for r in EXPORTED if r in wanted]
    objects: list[dict[str, Any]] = []
    for rule in chosen:
        for policy, binding in policies_for(rule):
            objects.extend((policy, binding))
    return objects


def to_yaml(objects: list[dict[str, Any]]) -> str:
    """The objects as one multi-document YAML stream, ready for ``kubectl apply -f``."""
    import yaml  # function-level import: for start-up time

    header = (
        "# ValidatingAdmissionPolicies generated by `gpuplane policy export` (Kubernetes 1.30+).\n"
        "# Each policy is one gpuplane lint rule; `gpuplane explain <rule>` documents it.\n"
    )
    docs = [yaml.safe_dump(o, sort_keys=False, width=10_000, allow_unicode=True) for o in objects]
    return header + "---\n" + "---\n".join(docs)
