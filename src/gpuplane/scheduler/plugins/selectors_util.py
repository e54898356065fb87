"""Label-selector helpers shared by PodTopologySpread and InterPodAffinity."""

from __future__ import annotations

from collections.abc import Sequence

from gpuplane.k8s.objects import LabelSelector, LabelSelectorRequirement, Pod


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
