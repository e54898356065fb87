"""NodePorts: host ports already taken on the node.

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports/node_ports.go
(``ErrReason``, Unschedulable: preemption can free a port) and ``HostPortInfo`` in
pkg/scheduler/framework/types.go: a port conflicts when protocol and port match and the
IPs are equal or either is the wildcard 0.0.0.0 (an empty hostIP means 0.0.0.0).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuplane.k8s.objects import Pod
from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import NodeInfo, Status, unschedulable
from gpuplane.scheduler.plugins.base import FilterPlugin

NAME = "NodePorts"
# node_ports.go ErrReason
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_WILDCARD = "0.0.0.0"

Port = tuple[str, str, int]  # (ip, protocol, port)


def pod_host_ports(pod: Pod) -> list[Port]:
    """The (ip, protocol, hostPort) triples a pod claims on its node (init containers included)."""
    ports: list[Port] = []
    for containers in (pod.spec.init_containers, pod.spec.containers):
        for container in containers:
            for port in container.ports:
                if port.host_port:
                    ports.append((port.host_ip or _WILDCARD, port.protocol or "TCP", port.host_port))
    return ports


def conflicts(wanted: Iterable[Port], used: set[Port]) -> bool:
    for ip, proto, port in wanted:
        if (ip, proto, port) in used:
            return True
        if ip == _WILDCARD:
            if any(u_proto == proto and u_port == port for _, u_proto, u_port in used):
                return True
        elif (_WILDCARD, proto, port) in used:
            return True
    return False


@dataclass(slots=True)
class PortsState:
    """PreFilter's ``preFilterState``: the host ports the pod's containers ask for."""

    ports: list[Port]


class NodePorts(FilterPlugin):
    name = NAME

    def relevant(self, ctx: PodContext) -> bool:
        ports = pod_host_ports(ctx.pod)
        ctx.state.write(PortsState(ports))
        return bool(ports)

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        used = node.used_ports
        removed = ctx.removed.get(node.index)
        if removed:
            freed = {p for pod in removed for p in pod_host_ports(pod)}
            used = used - freed
        added = ctx.added.get(node.index)
        if added:  # nominated pods count as already there (RunFilterPluginsWithNominatedPods)
            used = used | {p for pod in added for p in pod_host_ports(pod)}
        if used and conflicts(ctx.state.require(PortsState).ports, used):
            return unschedulable(NAME, ERR_REASON)
        return None
