"""NodeResourcesFit: does the pod's request fit in the node's free allocatable?

Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go
(``fitsRequest``): pod count first (``Too many pods`` when ``len(pods)+1 > allowed``), then
``Insufficient cpu``, ``Insufficient memory``, ``Insufficient ephemeral-storage``, then
``Insufficient <name>`` for each requested scalar (extended) resource; every shortfall is
a separate reason of the same Status (so a node can count twice in the histogram).
The code is Unschedulable; from v1.34 (PR #131345) UnschedulableAndUnresolvable when a
request exceeds the node's *whole* allocatable (preemption could never help).
PreFilter (v1.28, SidecarContainers off): ``Pod has a restartable init container and the
SidecarContainers feature is disabled``.

The request is ``resource.PodRequests`` (component-helpers/resource/helpers.go), computed by
``gpuplane.k8s.requests.pod_requests``. Here the check runs over all nodes at once on the
index's resources x nodes matrices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuplane.scheduler.context import PodContext
from gpuplane.scheduler.framework import UU, NodeInfo, Status, U
from gpuplane.scheduler.plugins.base import FilterPlugin, PreFilterResult

NAME = "NodeResourcesFit"
# fit.go: the pod-count reason and the "Insufficient " prefix of every resource reason.
REASON_TOO_MANY_PODS = "Too many pods"
INSUFFICIENT = "Insufficient "
# fit.go PreFilter (SidecarContainers disabled)
ERR_REASON_SIDECARS = "Pod has a restartable init container and the SidecarContainers feature is disabled"
_FIRST = ("cpu", "memory", "ephemeral-storage")
PODS = "pods"


def ordered_resources(requests: dict[str, int]) -> list[str]:
    """Resources the pod requests (> 0) in fitsRequest's order (scalars sorted for stability)."""
    first = [name for name in _FIRST if requests.get(name, 0) > 0]
    rest = sorted(n for n, v in requests.items() if v > 0 and n not in _FIRST and n != PODS)
    return first + rest


@dataclass(slots=True)
class FitState:
    """PreFilter's ``preFilterState``: the resources the pod requests, in fitsRequest order."""

    resources: list[str]


class NodeResourcesFit(FilterPlugin):
    name = NAME

    def pre_filter(self, ctx: PodContext) -> tuple[PreFilterResult | None, Status | None]:
        if not ctx.wording.sidecars_enabled and any(
            c.restart_policy == "Always" for c in ctx.pod.spec.init_containers
        ):
            return None, Status(UU, (ERR_REASON_SIDECARS,), NAME)
        ctx.state.write(FitState(ordered_resources(ctx.requests)))
        return None, None

    def filter(self, ctx: PodContext, node: NodeInfo) -> Status | None:
        """One node, honouring pods removed for this cycle (preemption dry runs)."""
        removed = ctx.removed.get(node.index, ())
        names = ctx.state.require(FitState).resources
        freed: dict[str, int] = {}
        column = ctx.freed.get(node.index)
        rows = ctx.index.resource_index
        if column is not None and all(name in rows for name in names):
            freed = {name: int(column[rows[name]]) for name in names}  # summed once per cluster
        else:
            for pod in removed:
                for name, amount in ctx.index.pod_requests(pod).items():
                    freed[name] = freed.get(name, 0) + amount
        reasons: list[str] = []
        unresolvable = False
        alloc = node.allocatable
        requested = node.requested
        if requested.get(PODS, 0) - len(removed) + 1 > alloc.get(PODS, 0):
            reasons.append(REASON_TOO_MANY_PODS)
        for name in names:
            want = ctx.requests[name]
            have = alloc.get(name, 0)
            if want > have - (requested.get(name, 0) - freed.get(name, 0)):
                reasons.append(INSUFFICIENT + name)
                if want > have:
                    unresolvable = True
        if not reasons:
            return None
        code = UU if unresolvable and ctx.wording.fit_unresolvable_over_allocatable else U
        return Status(code, tuple(reasons), NAME)

    def filter_vector(
        self,
        ctx: PodContext,
        nodes: np.ndarray,
        extra: np.ndarray | None = None,
        freed: np.ndarray | None = None,
    ) -> list[tuple[np.ndarray, Status]]:
        """All ``nodes`` (indexes) at once; ``extra`` (resources x nodes) adds requests of
        nominated pods, ``freed`` (the same shape) takes off those of a dry run's removed pods.
        Returns each distinct failing Status with its nodes.

        Only the rows of the resources the pod asks for (and ``pods``) are read: a cluster's
        resource list (every MIG profile, every extended resource) is much longer than a pod's."""
        index = ctx.index
        names = ctx.state.require(FitState).resources
        resource_index = index.resource_index
        pods_row = resource_index[PODS]
        at: dict[str, int] = {}  # resource -> its row in the matrices below
        rows = [pods_row]
        for name in names:
            row = resource_index.get(name)
            if row is not None:
                at[name] = len(rows)
                rows.append(row)
        cells = np.ix_(np.array(rows, dtype=np.intp), nodes)
        alloc = index.alloc[cells]
        req = index.req[cells]
        if extra is not None:
            req = req + extra[cells]
        if freed is not None:
            req = req - freed[cells]
        failing = [req[0] + 1 > alloc[0]]
        over: list[np.ndarray] = [np.zeros(len(nodes), dtype=bool)]
        for name in names:
            want = ctx.requests[name]
            k = at.get(name)
            if k is None:
                failing.append(np.ones(len(nodes), dtype=bool))
                over.append(np.ones(len(nodes), dtype=bool))
                continue
            failing.append(want > alloc[k] - req[k])
            over.append(want > alloc[k])
        fail = np.stack(failing)
        any_fail = fail.any(axis=0)
        if not any_fail.any():
            return []
        weights = (np.int64(1) << np.arange(len(failing), dtype=np.int64))[:, None]
        keys = (fail * weights).sum(axis=0)
        if ctx.wording.fit_unresolvable_over_allocatable:
            uu = (np.stack(over) & fail).any(axis=0)
            keys = keys * 2 + uu
        else:
            keys = keys * 2
        labels = [REASON_TOO_MANY_PODS] + [INSUFFICIENT + n for n in names]
        sel = np.nonzero(any_fail)[0]
        out: list[tuple[np.ndarray, Status]] = []
        sub = keys[sel]
        for key in np.unique(sub):
            k = int(key)
            bits = k >> 1
            reasons = tuple(labels[b] for b in range(len(labels)) if bits >> b & 1)
            out.append((nodes[sel[sub == key]], Status(UU if k & 1 else U, reasons, NAME)))
        return out
