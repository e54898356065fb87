"""Label-selector helpers shared by PodTopologySpread and InterPodAffinity."""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.k8s.objects import LabelSelector, LabelSelectorRequirement, Node, Pod
from gpuplane.k8s.selectors import pod_matches_node_selector, pod_matches_required_node_affinity
from gpuplane.k8s.tolerations import find_untolerated_taint


def with_label_keys(
    selector: LabelSelector | None, pod: Pod, match_keys: list[str], mismatch_keys: Sequence[str] = ()
) -> LabelSelector | None:
    """``matchLabelKeys`` / ``mismatchLabelKeys``: the incoming pod's values of those labels are
    ANDed into the selector as ``In`` / ``NotIn`` (keys the pod lacks are ignored)."""
    if selector is None or (not match_keys and not mismatch_keys):
        return selector
    labels = pod.metadata.labels
    extra = [
        LabelSelectorRequirement(key=k, operator="In", values=[labels[k]]) for k in match_keys if k in labels
    ] + [
        LabelSelectorRequirement(key=k, operator="NotIn", values=[labels[k]])
        for k in mismatch_keys
        if k in labels
    ]
    if not extra:
        return selector
    return LabelSelector(
        match_labels=dict(selector.match_labels),
        match_expressions=[*selector.match_expressions, *extra],
    )


class NodeInclusion:
    """Topology spread's node inclusion policies (``nodeAffinityPolicy``, ``nodeTaintsPolicy``,
    upstream ``podtopologyspread/common.go``) for one node: whether the node counts toward a
    constraint's domains. Each check runs at most once per node, shared by every constraint, so
    PreFilter and PreScore walk the nodes at the same cost."""

    __slots__ = ("_affinity", "_node", "_pod", "_taints")

    def __init__(self, pod: Pod, node: Node) -> None:
        self._pod = pod
        self._node = node
        self._affinity: bool | None = None
        self._taints: bool | None = None

    def admits(self, affinity_honor: bool, taints_honor: bool) -> bool:
        if affinity_honor:
            if self._affinity is None:
                self._affinity = pod_matches_node_selector(
                    self._pod, self._node
                ) and pod_matches_required_node_affinity(self._pod, self._node)
            if not self._affinity:
                return False
        if taints_honor:
            if self._taints is None:
                untolerated = find_untolerated_taint(
                    self._node.spec.taints, self._pod.spec.tolerations, effects=("NoSchedule", "NoExecute")
                )
                self._taints = untolerated is None
            if not self._taints:
                return False
        return True
