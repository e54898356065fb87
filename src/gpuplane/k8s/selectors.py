"""Label selectors, node selectors and node affinity, with upstream's exact semantics.

Sources (kubernetes/kubernetes, staging/src/k8s.io/...):

* ``apimachinery/pkg/labels/selector.go``: ``NewRequirement`` (which value counts each
  operator needs, and the error texts) and ``Requirement.Matches`` (``NotIn`` and
  ``DoesNotExist`` match an absent key; ``Gt``/``Lt`` parse both sides with
  ``strconv.ParseInt(s, 10, 64)`` and fail closed).
* ``apimachinery/pkg/apis/meta/v1/helpers.go`` ``LabelSelectorAsSelector``: a nil selector
  selects nothing, an empty one selects everything.
* ``component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go``: terms are ORed; an
  empty term matches nothing; a term with a parse error never matches; ``matchFields``
  supports ``In``/``NotIn`` with exactly one value, only ``metadata.name`` exists as a
  field, and fields are not checked when the node has no name;
  ``GetRequiredNodeAffinity(pod).Match(node)`` = ``spec.nodeSelector`` AND the required
  terms; ``PreferredSchedulingTerms.Score`` sums the weights of matching terms, skipping
  weight-0 and empty terms.

Selectors that do not parse: upstream returns an error from selector construction and the
caller decides (the NodeAffinity plugin treats the term as non-matching; PreScore fails on a
bad preferred term). Here matching is a plain ``bool`` so engines never crash: an invalid
requirement simply matches nothing, and :func:`label_selector_errors` /
:func:`node_selector_requirement_errors` report upstream's message for lint rules.
Label key and value *syntax* is not checked here (the API server's validation does it).

Every function accepts the typed structs of :mod:`gpuplane.k8s.objects` and the plain
dicts of a manifest (camelCase keys).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from gpuplane.k8s.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
)

__all__ = [
    "label_selector_errors",
    "label_selector_matches",
    "label_selector_requirements",
    "node_selector_matches",
    "node_selector_requirement_errors",
    "node_selector_requirement_matches",
    "node_selector_term_matches",
    "node_selector_term_matches_labels",
    "parse_go_int64",
    "pod_matches_node_selector",
    "pod_matches_required_node_affinity",
    "preferred_node_affinity_score",
]

LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
NODE_FIELD_OPERATORS = ("In", "NotIn")
NODE_NAME_FIELD = "metadata.name"

_GO_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

# Error texts from labels.NewRequirement / nodeaffinity (verbatim).
_ERR_IN_EMPTY = "for 'in', 'notin' operators, values set can't be empty"
_ERR_EXISTS_VALUES = "values set must be empty for exists and does not exist"
_ERR_GTLT_ONE = "for 'Gt', 'Lt' operators, exactly one value is required"
_ERR_GTLT_INT = "for 'Gt', 'Lt' operators, the value must be an integer"
_ERR_FIELD_ONE = "must have one element"


def parse_go_int64(text: Any) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, or ``None`` where Go returns an error.

    Stricter than ``int()``: no whitespace, no underscores, int64 range only.
    """
    if type(text) is not str or not _GO_INT_RE.match(text):
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None


# Operator given to a requirement whose key, operator or values have the wrong type (a list as
# the key, a string as ``values``, an entry that is not a map): it matches nothing and has no
# parse error of its own (the API server refuses it on decode; lint's pod-template-invalid says so).
_MISTYPED = "\x00mistyped"


def _parts(req: Any) -> tuple[str, str, Sequence[Any]]:
    """``(key, operator, values)`` of a typed requirement or a manifest dict (never raises)."""
    if isinstance(req, (NodeSelectorRequirement, LabelSelectorRequirement)):
        return req.key, req.operator, req.values
    if isinstance(req, Mapping):
        key, op, values = req.get("key"), req.get("operator"), req.get("values")
        if values is None:
            values = ()
        if (
            not (isinstance(key, str) or key is None)
            or not (isinstance(op, str) or op is None)
            or not isinstance(values, (list, tuple))
        ):
            return "", _MISTYPED, ()
        return key or "", op or "", values
    return "", _MISTYPED, ()


def _requirement(
    key: str, op: str, values: Sequence[Any], labels: Mapping[str, str], node: bool
) -> bool | None:
    """``Requirement.Matches``; ``None`` when ``NewRequirement`` would refuse the requirement."""
    if op == "In":
        if not values:
            return None
        v = labels.get(key)
        return v is not None and v in values
    if op == "NotIn":
        if not values:
            return None
        v = labels.get(key)
        return v is None or v not in values
    if op == "Exists":
        return None if values else key in labels
    if op == "DoesNotExist":
        return None if values else key not in labels
    if node and (op == "Gt" or op == "Lt"):
        if len(values) != 1:
            return None
        bound = parse_go_int64(values[0])
        if bound is None:
            return None
        v = labels.get(key)
        if v is None:
            return False
        n = parse_go_int64(v)
        if n is None:
            return False
        return n > bound if op == "Gt" else n < bound
    return None


def _requirement_error(op: str, values: Sequence[Any], node: bool) -> str | None:
    if op == _MISTYPED:
        return None
    if op in ("In", "NotIn"):
        return None if values else _ERR_IN_EMPTY
    if op in ("Exists", "DoesNotExist"):
        return _ERR_EXISTS_VALUES if values else None
    if node and op in ("Gt", "Lt"):
        if len(values) != 1:
            return _ERR_GTLT_ONE
        return None if parse_go_int64(values[0]) is not None else _ERR_GTLT_INT
    if node:
        allowed = ", ".join(f'"{o}"' for o in NODE_SELECTOR_OPERATORS)
        return f'Unsupported value: "{op}": supported values: {allowed}'
    return f'"{op}" is not a valid label selector operator'


# -- label selectors (metav1.LabelSelector) --------------------------------------------------


_NO_MATCH: tuple[Any, ...] = (
    None,
)  # expressions of a mistyped selector: one requirement that matches nothing


def _label_selector_parts(selector: Any) -> tuple[Mapping[str, str], Sequence[Any]]:
    if isinstance(selector, LabelSelector):
        return selector.match_labels, selector.match_expressions
    if isinstance(selector, Mapping):
        labels = selector.get("matchLabels") or {}
        expressions = selector.get("matchExpressions") or ()
        if not isinstance(labels, Mapping) or not isinstance(expressions, (list, tuple)):
            return {}, _NO_MATCH
        return labels, expressions
    return {}, _NO_MATCH


def label_selector_matches(
    selector: LabelSelector | Mapping[str, Any] | None, labels: Mapping[str, str]
) -> bool:
    """``LabelSelectorAsSelector(selector).Matches(labels)``.

    ``None`` selects nothing; an empty selector (no matchLabels, no matchExpressions)
    selects everything; all requirements are ANDed. A selector upstream would refuse
    (unknown operator, ``In`` without values, ``Exists`` with values) selects nothing.
    """
    if selector is None:
        return False
    match_labels, expressions = _label_selector_parts(selector)
    for k, v in match_labels.items():
        if not isinstance(k, str) or labels.get(k) != v:
            return False
    for req in expressions:
        key, op, values = _parts(req)
        if not _requirement(key, op, values, labels, False):
            return False
    return True


def label_selector_requirements(
    selector: LabelSelector | Mapping[str, Any] | None,
) -> tuple[Mapping[Any, Any], list[tuple[str, str, Sequence[Any]]]] | None:
    """What :func:`label_selector_matches` ANDs: ``(matchLabels, [(key, operator, values)])``, or
    None when the selector selects nothing whatever the labels (nil, or mistyped). An index uses it to
    pick candidate pods; the final answer stays :func:`label_selector_matches`'s."""
    if selector is None:
        return None
    match_labels, expressions = _label_selector_parts(selector)
    if expressions is _NO_MATCH:
        return None
    return match_labels, [_parts(req) for req in expressions]


def label_selector_errors(selector: LabelSelector | Mapping[str, Any] | None) -> list[str]:
    """Upstream's messages for the requirements ``LabelSelectorAsSelector`` would refuse."""
    if selector is None:
        return []
    _, expressions = _label_selector_parts(selector)
    if expressions is _NO_MATCH:
        return []
    errors = []
    for i, req in enumerate(expressions):
        _, op, values = _parts(req)
        err = _requirement_error(op, values, False)
        if err:
            errors.append(f"matchExpressions[{i}]: {err}")
    return errors


# -- node selectors (v1.NodeSelector) and node affinity --------------------------------------


def node_selector_requirement_matches(
    req: NodeSelectorRequirement | Mapping[str, Any], labels: Mapping[str, str]
) -> bool:
    """One ``matchExpressions`` entry against node labels (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key, op, values = _parts(req)
    return bool(_requirement(key, op, values, labels, True))


def node_selector_requirement_errors(
    req: NodeSelectorRequirement | Mapping[str, Any], field: bool = False
) -> list[str]:
    """Why the scheduler cannot parse a ``matchExpressions`` (or, with ``field``, ``matchFields``) entry."""
    _, op, values = _parts(req)
    if field:
        if op not in NODE_FIELD_OPERATORS:
            allowed = ", ".join(f'"{o}"' for o in NODE_FIELD_OPERATORS)
            return [f'Unsupported value: "{op}": supported values: {allowed}']
        return [] if len(values) == 1 else [_ERR_FIELD_ONE]
    err = _requirement_error(op, values, True)
    return [err] if err else []


def _term_parts(term: Any) -> tuple[Sequence[Any], Sequence[Any]]:
    if isinstance(term, NodeSelectorTerm):
        return term.match_expressions, term.match_fields
    if isinstance(term, Mapping):
        expressions, fields = term.get("matchExpressions") or (), term.get("matchFields") or ()
        if not isinstance(expressions, (list, tuple)) or not isinstance(fields, (list, tuple)):
            return _NO_MATCH, ()
        return expressions, fields
    return (), ()


def _field_requirement(req: Any, node_name: str) -> bool | None:
    """``nodeSelectorRequirementsAsFieldSelector`` for one entry; ``None`` = parse error."""
    key, op, values = _parts(req)
    if op not in NODE_FIELD_OPERATORS or len(values) != 1 or not isinstance(values[0], str):
        return None
    if not node_name:  # no fields on the node: upstream skips the field check
        return True
    actual = node_name if key == NODE_NAME_FIELD else ""
    return (actual == values[0]) if op == "In" else (actual != values[0])


def node_selector_term_matches_labels(
    term: NodeSelectorTerm | Mapping[str, Any], labels: Mapping[str, str], node_name: str = ""
) -> bool:
    """A node selector term against a node's labels and name (dict-friendly form).

    A term with neither ``matchExpressions`` nor ``matchFields`` matches nothing; a term
    with a requirement the scheduler cannot parse never matches.
    """
    expressions, fields = _term_parts(term)
    if not expressions and not fields:
        return False
    for req in expressions:
        key, op, values = _parts(req)
        if not _requirement(key, op, values, labels, True):
            return False
    return all(_field_requirement(req, node_name) for req in fields)


def node_selector_term_matches(term: NodeSelectorTerm | Mapping[str, Any], node: Node) -> bool:
    """A node selector term against a node (labels via matchExpressions, name via matchFields)."""
    meta = node.metadata
    return node_selector_term_matches_labels(term, meta.labels, meta.name)


def node_selector_matches(selector: NodeSelector | Mapping[str, Any], node: Node) -> bool:
    """``NodeSelector.Match``: the terms ORed; no terms (or only empty ones) match nothing."""
    if isinstance(selector, Mapping):
        terms = selector.get("nodeSelectorTerms") or ()
        if not isinstance(terms, (list, tuple)):
            return False
    else:
        terms = selector.node_selector_terms
    meta = node.metadata
    labels, name = meta.labels, meta.name
    return any(node_selector_term_matches_labels(term, labels, name) for term in terms)


def pod_matches_node_selector(pod: Pod, node: Node) -> bool:
    """``spec.nodeSelector``: every pair must be a node label with exactly that value."""
    labels = node.metadata.labels
    return all(labels.get(k) == v for k, v in pod.spec.node_selector.items())


def _required_node_affinity(pod: Pod) -> NodeSelector | None:
    """``spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``, or None at the
    first level that is absent (the matcher and the selection key read the same field)."""
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    if node_affinity is None:
        return None
    return node_affinity.required_during_scheduling_ignored_during_execution


def pod_matches_required_node_affinity(pod: Pod, node: Node) -> bool:
    """``GetRequiredNodeAffinity(pod).Match(node)``: nodeSelector AND required node affinity."""
    spec = pod.spec
    if spec.node_selector and not pod_matches_node_selector(pod, node):
        return False
    required = _required_node_affinity(pod)
    if required is None:
        return True
    return node_selector_matches(required, node)


def node_selection_key(pod: Pod) -> bytes:
    """What :func:`pod_matches_required_node_affinity` reads of ``pod`` (its nodeSelector and its
    required node affinity), encoded: pods with equal keys match exactly the same nodes, so a
    question about "the nodes this pod may use" can be answered once per key, not per pod."""
    import msgspec  # for start-up time: only the cluster-wide callers need it

    spec = pod.spec
    required = _required_node_affinity(pod)
    return msgspec.json.encode([spec.node_selector or {}, required])


def node_selection_reads(pod: Pod) -> tuple[frozenset[str], bool]:
    """What :func:`pod_matches_required_node_affinity` reads of a node for ``pod``: the label keys
    of its nodeSelector and of its required terms' ``matchExpressions``, and whether a
    ``matchFields`` term reads the node's name. Nodes equal in those labels (and that name) are
    matched alike, so node questions can be asked of node shapes keyed by them."""
    keys = set(pod.spec.node_selector)
    reads_name = False
    required = _required_node_affinity(pod)
    if required is not None:
        for term in required.node_selector_terms:
            reads_name = reads_name or bool(term.match_fields)
            keys.update(req.key for req in term.match_expressions)
    return frozenset(keys), reads_name


def preferred_node_affinity_score(pod: Pod, node: Node) -> int:
    """The NodeAffinity plugin's raw score: the sum of weights of matching preferred terms.

    Terms with weight 0 or an empty preference are skipped, as upstream does. (Upstream
    fails PreScore when any preferred term does not parse; here such a term adds nothing.)
    """
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    if node_affinity is None:
        return 0
    preferred = node_affinity.preferred_during_scheduling_ignored_during_execution
    if not preferred:
        return 0
    meta = node.metadata
    labels, name = meta.labels, meta.name
    score = 0
    for term in preferred:
        if term.weight and node_selector_term_matches_labels(term.preference, labels, name):
            score += term.weight
    return score
