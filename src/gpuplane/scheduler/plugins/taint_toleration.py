"""TaintToleration: NoSchedule / NoExecute taints the pod does not tolerate.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go.
Filter looks only at ``NoSchedule`` and ``NoExecute`` taints and reports the first untolerated
one (``FindMatchingUntoleratedTaint``), UnschedulableAndUnresolvable. The text names that
taint (``node(s) had untolerated taint {%s: %s}``) until v1.35, where it became
``node(s) had untolerated taint(s)`` (PRs #134740 / #135023; see versions.py).
"""

from __future__ import annotations

from gpuplane.k8s.objects import Taint
from gpuplane.k8s.tolerations import find_untolerated_taint
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin

NAME = "TaintToleration"
# taint_toleration.go (v1.35+): generic text, no key/value.
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
# taint_toleration.go (v1.25-v1.34): `fmt.Sprintf("node(s) had untolerated taint {%s: %s}", taint.Key, taint.Value)`
ERR_REASON_UNTOLERATED_KV = "node(s) had untolerated taint {{{key}: {value}}}"
_EFFECTS = ("NoSchedule", "NoExecute")


def untolerated_reason(taint: Taint, with_key_value: bool) -> str:
    """The Filter reason for ``taint`` in the wording of the cluster's version."""
    if with_key_value:
        return ERR_REASON_UNTOLERATED_KV.format(key=taint.key, value=taint.value)
    return ERR_REASON_UNTOLERATED


class TaintToleration(FilterPlugin):
    name = NAME
    static = True

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        taints = node.node.spec.taints
        if not taints:
            return None
        taint = find_untolerated_taint(taints, ctx.pod.spec.tolerations, effects=_EFFECTS)
        if taint is None:
            return None
        return unresolvable(NAME, untolerated_reason(taint, ctx.wording.taint_with_key_value))
