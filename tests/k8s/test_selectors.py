"""Label selectors, node selectors and node affinity.

Semantics from kubernetes/kubernetes ``staging/src/k8s.io/apimachinery/pkg/labels/selector.go``
(``Requirement.Matches``; selector_test.go TestRequirementMatches-style cases: NotIn and
DoesNotExist match an absent key, Gt/Lt parse int64), ``metav1.LabelSelectorAsSelector``
(nil -> nothing, empty -> everything) and
``staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go``
(empty terms match nothing, matchFields on metadata.name, terms ORed, preferred weights).
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuplane.k8s.objects import LabelSelector, Node, NodeSelectorRequirement, node_from_dict, pod_from_dict
from gpuplane.k8s.selectors import (
    label_selector_errors,
    label_selector_matches,
    node_selector_matches,
    node_selector_requirement_errors,
    node_selector_requirement_matches,
    node_selector_term_matches,
    node_selector_term_matches_labels,
    parse_go_int64,
    pod_matches_node_selector,
    pod_matches_required_node_affinity,
    preferred_node_affinity_score,
)

LABELS = {"gpu": "a100", "zone": "us-east-1a", "gpus": "8", "empty": ""}


def node(name: str = "n1", labels: dict[str, str] | None = None) -> Node:
    return node_from_dict({"metadata": {"name": name, "labels": LABELS if labels is None else labels}})


def req(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=list(values))


@pytest.mark.parametrize(
    ("key", "op", "values", "expected"),
    [
        ("gpu", "In", ["a100", "h100"], True),
        ("gpu", "In", ["h100"], False),
        ("missing", "In", ["x"], False),
        ("gpu", "NotIn", ["h100"], True),
        ("gpu", "NotIn", ["a100"], False),
        ("missing", "NotIn", ["x"], True),  # absent key satisfies NotIn
        ("gpu", "Exists", [], True),
        ("missing", "Exists", [], False),
        ("empty", "Exists", [], True),
        ("missing", "DoesNotExist", [], True),
        ("gpu", "DoesNotExist", [], False),
        ("gpus", "Gt", ["4"], True),
        ("gpus", "Gt", ["8"], False),
        ("gpus", "Lt", ["9"], True),
        ("gpus", "Lt", ["+8"], False),
        ("gpus", "Gt", ["-1"], True),
        ("gpu", "Gt", ["1"], False),  # label not an integer
        ("missing", "Lt", ["1"], False),
        ("gpus", "Gt", ["four"], False),  # requirement does not parse
        ("gpus", "Gt", ["1", "2"], False),
        ("gpu", "In", [], False),  # In without values does not parse
        ("gpu", "Exists", ["a100"], False),
        ("gpu", "Equals", ["a100"], False),  # not a node selector operator
    ],
)
def test_node_selector_requirement(key: str, op: str, values: list[str], expected: bool) -> None:
    assert node_selector_requirement_matches(req(key, op, *values), LABELS) is expected
    assert (
        node_selector_requirement_matches({"key": key, "operator": op, "values": values}, LABELS) is expected
    )


def test_go_int_parsing_is_strict() -> None:
    assert parse_go_int64("42") == 42
    assert parse_go_int64("-7") == -7
    assert parse_go_int64("+7") == 7
    for bad in ("", " 1", "1_000", "1.0", "0x10", "9223372036854775808", "1 ", None, 5):
        assert parse_go_int64(bad) is None
    assert parse_go_int64("9223372036854775807") == 2**63 - 1


def test_label_selector_nil_and_empty() -> None:
    assert label_selector_matches(None, LABELS) is False
    assert label_selector_matches(LabelSelector(), LABELS) is True
    assert label_selector_matches({}, {}) is True


def test_label_selector_typed_and_dict() -> None:
    typed = LabelSelector(match_labels={"gpu": "a100"})
    assert label_selector_matches(typed, LABELS)
    assert not label_selector_matches(typed, {"gpu": "h100"})
    sel = {
        "matchLabels": {"zone": "us-east-1a"},
        "matchExpressions": [
            {"key": "gpu", "operator": "In", "values": ["a100", "h100"]},
            {"key": "spot", "operator": "DoesNotExist"},
        ],
    }
    assert label_selector_matches(sel, LABELS)
    assert not label_selector_matches(sel, {**LABELS, "spot": "true"})
    assert not label_selector_matches(sel, {"gpu": "a100"})


def test_label_selector_rejects_node_only_operators() -> None:
    sel = {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["1"]}]}
    assert label_selector_matches(sel, LABELS) is False
    assert label_selector_errors(sel) == ['matchExpressions[0]: "Gt" is not a valid label selector operator']


def test_label_selector_errors() -> None:
    sel = {
        "matchExpressions": [
            {"key": "a", "operator": "In", "values": []},
            {"key": "b", "operator": "Exists", "values": ["x"]},
            {"key": "c", "operator": "NotIn", "values": ["x"]},
        ]
    }
    assert label_selector_errors(sel) == [
        "matchExpressions[0]: for 'in', 'notin' operators, values set can't be empty",
        "matchExpressions[1]: values set must be empty for exists and does not exist",
    ]
    assert label_selector_errors(None) == []


def test_node_selector_requirement_errors() -> None:
    assert node_selector_requirement_errors(req("a", "Gt", "x")) == [
        "for 'Gt', 'Lt' operators, the value must be an integer"
    ]
    assert node_selector_requirement_errors(req("a", "Lt")) == [
        "for 'Gt', 'Lt' operators, exactly one value is required"
    ]
    assert node_selector_requirement_errors(req("a", "Foo")) == [
        'Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    ]
    assert node_selector_requirement_errors(req("metadata.name", "In", "a", "b"), field=True) == [
        "must have one element"
    ]
    assert node_selector_requirement_errors(req("metadata.name", "Exists"), field=True) == [
        'Unsupported value: "Exists": supported values: "In", "NotIn"'
    ]
    assert node_selector_requirement_errors(req("a", "In", "x")) == []


def term(
    exprs: list[dict[str, Any]] | None = None, fields: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs is not None:
        out["matchExpressions"] = exprs
    if fields is not None:
        out["matchFields"] = fields
    return out


def test_node_selector_terms() -> None:
    n = node("gpu-node-1")
    assert not node_selector_term_matches(term(), n)  # empty term matches nothing
    assert not node_selector_term_matches(term([], []), n)
    by_name = term(fields=[{"key": "metadata.name", "operator": "In", "values": ["gpu-node-1"]}])
    assert node_selector_term_matches(by_name, n)
    assert not node_selector_term_matches(by_name, node("other"))
    not_name = term(fields=[{"key": "metadata.name", "operator": "NotIn", "values": ["gpu-node-1"]}])
    assert not node_selector_term_matches(not_name, n)
    # labels AND fields in one term
    both = term(
        [{"key": "gpu", "operator": "In", "values": ["a100"]}],
        [{"key": "metadata.name", "operator": "In", "values": ["gpu-node-1"]}],
    )
    assert node_selector_term_matches(both, n)
    assert not node_selector_term_matches(both, node("gpu-node-1", {"gpu": "h100"}))
    # a field requirement that does not parse spoils the term
    bad_field = term(
        [{"key": "gpu", "operator": "Exists"}],
        [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}],
    )
    assert not node_selector_term_matches(bad_field, n)
    # node without a name: fields are not checked (nodeaffinity.go)
    assert node_selector_term_matches_labels(by_name, LABELS, "")


def test_node_selector_terms_are_ored() -> None:
    n = node()
    sel = {
        "nodeSelectorTerms": [
            term([{"key": "gpu", "operator": "In", "values": ["h100"]}]),
            term([{"key": "zone", "operator": "Exists"}]),
        ]
    }
    assert node_selector_matches(sel, n)
    assert not node_selector_matches({"nodeSelectorTerms": [term()]}, n)
    assert not node_selector_matches({"nodeSelectorTerms": []}, n)


def gpu_pod(**spec: Any) -> Any:
    return pod_from_dict({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}})


def test_pod_node_selector() -> None:
    n = node()
    assert pod_matches_node_selector(gpu_pod(), n)
    assert pod_matches_node_selector(gpu_pod(nodeSelector={"gpu": "a100", "empty": ""}), n)
    assert not pod_matches_node_selector(gpu_pod(nodeSelector={"gpu": "h100"}), n)
    assert not pod_matches_node_selector(gpu_pod(nodeSelector={"missing": ""}), n)


def test_required_node_affinity() -> None:
    n = node()
    required = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [term([{"key": "gpus", "operator": "Gt", "values": ["4"]}])]
            }
        }
    }
    assert pod_matches_required_node_affinity(gpu_pod(affinity=required), n)
    assert not pod_matches_required_node_affinity(gpu_pod(affinity=required), node(labels={"gpus": "2"}))
    # nodeSelector AND affinity
    assert not pod_matches_required_node_affinity(gpu_pod(affinity=required, nodeSelector={"gpu": "h100"}), n)
    assert pod_matches_required_node_affinity(gpu_pod(), n)
    assert pod_matches_required_node_affinity(gpu_pod(affinity={"nodeAffinity": {}}), n)
    empty = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    assert not pod_matches_required_node_affinity(gpu_pod(affinity=empty), n)


def test_preferred_node_affinity_score() -> None:
    n = node()
    prefs = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": term([{"key": "gpu", "operator": "In", "values": ["a100"]}])},
                {"weight": 5, "preference": term([{"key": "zone", "operator": "In", "values": ["eu"]}])},
                {"weight": 3, "preference": term([{"key": "gpus", "operator": "Gt", "values": ["4"]}])},
                {"weight": 7, "preference": term()},  # empty: skipped
                {"weight": 0, "preference": term([{"key": "gpu", "operator": "Exists"}])},
            ]
        }
    }
    assert preferred_node_affinity_score(gpu_pod(affinity=prefs), n) == 13
    assert preferred_node_affinity_score(gpu_pod(), n) == 0
