"""NodeName: a pod that names its node only fits that node.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name.go
(``ErrReason``, UnschedulableAndUnresolvable).
"""

from __future__ import annotations

from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unresolvable
from gpuplane.scheduler.plugins.base import FilterPlugin

NAME = "NodeName"
# node_name.go ErrReason
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(FilterPlugin):
    name = NAME
    static = True

    def relevant(self, ctx: PodContext) -> bool:
        return bool(ctx.pod.spec.node_name)

    def static_key(self, ctx: PodContext) -> bool:
        return bool(ctx.pod.spec.node_name)

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        wanted = ctx.pod.spec.node_name
        if not wanted or wanted == node.name:
            return None
        return unresolvable(NAME, ERR_REASON)
