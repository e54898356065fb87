"""Which nodes a DaemonSet runs a pod on.

Mirrors ``NodeShouldRunDaemonPod`` / ``predicates`` in kubernetes/kubernetes
``pkg/controller/daemon/daemon_controller.go``: the template's ``nodeName`` (if set) must
match, ``nodeSelector`` + required node affinity must match the node
(``nodeaffinity.GetRequiredNodeAffinity(pod).Match``), and every ``NoSchedule`` /
``NoExecute`` taint must be tolerated — counting the tolerations the DaemonSet
controller adds to every daemon pod (``AddOrUpdateDaemonPodTolerations`` in
``pkg/controller/daemon/util/daemonset_util.go``). Cordoned nodes still get a pod: the
controller adds a toleration for ``node.kubernetes.io/unschedulable``.
"""

from __future__ import annotations

from gpuplane.k8s.objects import (
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    Taint,
    Toleration,
    node_from_dict,
)

# AddOrUpdateDaemonPodTolerations (pkg/controller/daemon/util/daemonset_util.go)
DAEMON_TOLERATIONS: tuple[Toleration, ...] = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
# added only for hostNetwork daemon pods
HOST_NETWORK_TOLERATION = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect="NoSchedule"
)
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


def daemon_tolerations(pod: Pod) -> list[Toleration]:
    """The template's tolerations plus the ones the DaemonSet controller adds."""
    extra = [*DAEMON_TOLERATIONS, HOST_NETWORK_TOLERATION] if pod.spec.host_network else list(DAEMON_TOLERATIONS)
    return [*pod.spec.tolerations, *extra]


def should_run(pod: Pod, node: Node, tolerations: list[Toleration] | None = None) -> bool:
    """True when the DaemonSet controller would create a daemon pod on ``node``."""
    name = node.metadata.name
    if pod.spec.node_name and pod.spec.node_name != name:
        return False
    labels = node.metadata.labels
    for key, value in pod.spec.node_selector.items():
        if labels.get(key) != value:
            return False
    affinity = pod.spec.affinity
    required = affinity.node_affinity.required_during_scheduling_ignored_during_execution if (
        affinity and affinity.node_affinity
    ) else None
    if required is not None and not any(_term_matches(t, labels, name) for t in required.node_selector_terms):
        return False
    tols = tolerations if tolerations is not None else daemon_tolerations(pod)
    return all(
        taint.effect not in _FILTERED_EFFECTS or any(_tolerates(t, taint) for t in tols)
        for taint in node.spec.taints
    )


def eligible_nodes(pod: Pod, nodes: list) -> list[Node]:
    """The nodes (typed Node, or node dicts) a daemon pod of this template lands on."""
    tols = daemon_tolerations(pod)
    typed = (n if isinstance(n, Node) else node_from_dict(n) for n in nodes if isinstance(n, (Node, dict)))
    return [n for n in typed if should_run(pod, n, tols)]


def _tolerates(toleration: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint`` (staging/src/k8s.io/api/core/v1/toleration.go)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return False


def _term_matches(term: NodeSelectorTerm, labels: dict[str, str], node_name: str) -> bool:
    """A term with no requirements matches nothing (component-helpers nodeaffinity.go)."""
    if not term.match_expressions and not term.match_fields:
        return False
    for req in term.match_expressions:
        if not _requirement_matches(req, labels):
            return False
    # matchFields supports only metadata.name upstream
    return all(req.key == "metadata.name" and _requirement_matches(req, {"metadata.name": node_name})
               for req in term.match_fields)


def _requirement_matches(req: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    present = req.key in labels
    value = labels.get(req.key, "")
    op = req.operator
    if op == "In":
        return present and value in req.values
    if op == "NotIn":
        return not present or value not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(req.values) == 1:
        try:
            left, right = int(value), int(req.values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False
