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

from gpuplane.k8s.objects import Node, Pod, Toleration, node_from_dict
from gpuplane.k8s.selectors import pod_matches_required_node_affinity
from gpuplane.k8s.tolerations import find_untolerated_taint

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
    extra = (
        [*DAEMON_TOLERATIONS, HOST_NETWORK_TOLERATION] if pod.spec.host_network else list(DAEMON_TOLERATIONS)
    )
    return [*pod.spec.tolerations, *extra]


def should_run(pod: Pod, node: Node, tolerations: list[Toleration] | None = None) -> bool:
    """True when the DaemonSet controller would create a daemon pod on ``node``."""
    if pod.spec.node_name and pod.spec.node_name != node.metadata.name:
        return False
    if not pod_matches_required_node_affinity(pod, node):
        return False
    tols = tolerations if tolerations is not None else daemon_tolerations(pod)
    return find_untolerated_taint(node.spec.taints, tols, _FILTERED_EFFECTS) is None


def eligible_nodes(pod: Pod, nodes: list) -> list[Node]:
    """The nodes (typed Node, or node dicts) a daemon pod of this template lands on."""
    tols = daemon_tolerations(pod)
    typed = (n if isinstance(n, Node) else node_from_dict(n) for n in nodes if isinstance(n, (Node, dict)))
    return [n for n in typed if should_run(pod, n, tols)]
