"""NodeUnschedulable: cordoned nodes.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go
(Filter returns UnschedulableAndUnresolvable ``ErrReasonUnschedulable`` unless the pod tolerates
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, as DaemonSet pods do).
"""

from __future__ import annotations

from gpuplane.k8s.objects import Taint
from gpuplane.k8s.tolerations import tolerations_tolerate_taint
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin

NAME = "NodeUnschedulable"
# node_unschedulable.go ErrReasonUnschedulable
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable(FilterPlugin):
    name = NAME
    static = True

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        if not node.node.spec.unschedulable:
            return None
        if tolerations_tolerate_taint(ctx.pod.spec.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return unresolvable(NAME, ERR_REASON_UNSCHEDULABLE)
